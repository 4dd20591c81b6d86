/**
 * MIG devices through real CLI workers and the stand-in nvidia-smi: a
 * MIG-enabled GPU's slices are devices of their own, each run gets its
 * slice by UUID, a run demanding two whole devices never gets two slices
 * (CUDA shows a process one), and --gpus takes UUIDs.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCliWorker } from '../support/cli-worker.js';
import { a100, fakeGpuBox } from '../support/fake-gpu.js';
import { cliWhy, connectClient, newQueue } from '../support/fitq.js';
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
});
