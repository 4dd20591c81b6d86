/**
 * MIG devices through real CLI workers and the stand-in nvidia-smi: a
 * MIG-enabled GPU's slices are devices of their own, each run gets its
 * slice by UUID, a run demanding two whole devices never gets two slices
 * (CUDA shows a process one), and --gpus takes UUIDs; each slice is read
 * on its own: its memory for gpumem, a process fitq did not start on one
 * slice leaves the others usable.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { a100, fakeGpuBox } from '../support/fake-gpu.js';
import { cliWhy, connectClient, fitq, newQueue } from '../support/fitq.js';
import { waitFor } from '../support/wait.js';

const SLICES = [
  { profile: '1g.5gb', uuid: 'MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f', gi: 7, ci: 0 },
  { profile: '1g.5gb', uuid: 'MIG-8f3d2a51-0b7e-5c1e-a2d9-6e1f0c4b7a22', gi: 8, ci: 0 },
];

describe('MIG devices', () => {
  it('hands out each MIG device by its UUID, never two to one run', async () => {
    const box = fakeGpuBox({ gpus: [{ ...a100('GPU-6109dd5c-d378-24ee-f344-79b537574ea6'), mig: SLICES }, a100('GPU-b')] });
    const queue = newQueue();
    const worker = spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1s', '--name', 'box'], undefined, box.env);
    await worker.waitForMessage('GPU devices: 1,100,101 (probed every 1 s through nvidia-smi)');
    await worker.waitForMessage(`GPU 100 (MIG 1g.5gb 0 of GPU 0): runs get CUDA_VISIBLE_DEVICES=${SLICES[0]!.uuid}`);
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-mig-')), 'open');
    const command = ['sh', '-c', `echo "dev=$CUDA_VISIBLE_DEVICES"; while [ ! -e '${gate}' ]; do sleep 0.05; done`];
    const { runs } = await client.stage({ command, resources: 'gpu=1', repeat: 3 });
    await waitFor('three runs running', async () => (await Promise.all(runs.map(({ id }) => client.getRun(id)))).every((run) => run.status === 'running'));
    const pair = (await client.stage({ command: ['true'], resources: 'gpu=2' })).runs[0]!.id;
    expect((await cliWhy(queue)).get(pair)).toContain(
      "needs more than any live worker has: gpu=2 on whole GPUs: CUDA shows a process one MIG device at most, and box's 2 MIG devices are not whole GPUs",
    );
    writeFileSync(gate, '');
    const seen = await Promise.all(runs.map(async ({ id }) => {
      expect((await client.waitForEnd(id)).status).toBe('completed');
      const line = (await client.readLog(id)).flatMap((entry) => (entry.kind === 'line' ? [entry.line] : []))[0];
      return line;
    }));
    expect(seen.sort()).toEqual([`dev=${SLICES[1]!.uuid}`, `dev=${SLICES[0]!.uuid}`, 'dev=1'].sort());
  });

  it('takes devices by UUID with --gpus, MIG devices and whole GPUs alike', async () => {
    const box = fakeGpuBox({ gpus: [{ ...a100('GPU-a'), mig: SLICES }, a100('GPU-b')] });
    const worker = spawnCliWorker(newQueue(), ['--gpus', `${SLICES[1]!.uuid},GPU-b`], undefined, box.env);
    await worker.waitForMessage('GPU devices: 1,101 (probed every 5 s through nvidia-smi)');
    const refused = spawnCliWorker(newQueue(), ['--gpus', 'MIG-nothing'], undefined, box.env);
    expect((await refused.exited).exitCode).toBe(2);
    expect(refused.stderr()).toContain("invalid --gpus 'MIG-nothing': no device nvidia-smi lists is 'MIG-nothing'");
  });

  it('reads each MIG device on its own: its memory takes gpumem, a process fitq did not start on one leaves the others usable', async () => {
    const mixed = [
      { profile: '3g.20gb', uuid: 'MIG-0a5e7c1d-93b2-5f4e-8d61-2c7b9e0f4a13', gi: 1, ci: 0, memoryTotalMiB: 19968 },
      ...SLICES.map((slice) => ({ ...slice, memoryTotalMiB: 4864 })),
    ];
    const box = fakeGpuBox({
      gpus: [{ ...a100('GPU-6109dd5c-d378-24ee-f344-79b537574ea6'), mig: mixed }],
      processes: [{ gpu: 0, slice: 1, pid: 4242, usedMiB: 900, name: '/usr/bin/python3' }],
    });
    const queue = newQueue();
    const worker = spawnCliWorker(queue, ['--gpus', 'auto', '--gpu-probe-interval', '1s', '--name', 'box'], undefined, box.env);
    // 19,968 + 2 × 4,864 MiB, in whole megabytes.
    await worker.waitForMessage('Worker resources: gpu=3 gpumem=31.138G');
    await worker.waitForMessage('GPU 101 is busy: used by a process fitq did not start (pid 4242, python3); no run is placed on it until that changes');
    const client = await connectClient(queue);
    const gate = join(mkdtempSync(join(tmpdir(), 'fitq-mig-')), 'open');
    const big = (await client.stage({ command: ['sh', '-c', `while [ ! -e '${gate}' ]; do sleep 0.05; done`], resources: 'gpu=0.5 gpumem=10G' })).runs[0]!.id;
    await waitFor('the 10G run running', async () => (await client.getRun(big)).status === 'running');
    // Only the 3g.20gb slice holds 10G; the busy 1g.5gb one takes nothing, so a whole run gets the other.
    expect((await client.getRun(big)).devices).toEqual([100]);
    const plain = (await client.stage({ command: ['sh', '-c', 'echo "dev=$CUDA_VISIBLE_DEVICES"'], resources: 'gpu=1' })).runs[0]!.id;
    expect((await client.waitForEnd(plain)).status).toBe('completed');
    expect((await client.getRun(plain)).devices).toEqual([102]);
    // The 3g.20gb slice's other half: 19,957 MiB unused less the 10G booked.
    const second = (await client.stage({ command: ['true'], resources: 'gpu=0.5 gpumem=12G' })).runs[0]!.id;
    expect((await cliWhy(queue)).get(second)).toContain('needs gpumem=12G on one device; GPU 100 has 10.9G free of 20.9G');
    const shown = await fitq(['workers', '--json'], { queue });
    const devices = (JSON.parse(shown.stdout) as { devices: Record<string, { state: string; memoryTotalMiB?: number; uuid?: string }> }[])[0]!.devices;
    expect(devices['101']).toMatchObject({ state: 'busy', memoryTotalMiB: 4864, uuid: SLICES[0]!.uuid });
    expect(devices['102']).toMatchObject({ state: 'ok', memoryTotalMiB: 4864, uuid: SLICES[1]!.uuid });
    writeFileSync(gate, '');
    expect((await client.waitForEnd(second)).status).toBe('completed');
    expect((await client.getRun(second)).devices).toEqual([100]);
  });
});
