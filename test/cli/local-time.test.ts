/**
 * Every time a person reads is in the local time zone (TZ), in one form:
 * fitq runs' STAGED and WHY cells and fitq runs show's lines, never UTC
 * beside local time. `--json` keeps times as epoch-ms numbers.
 */
import { describe, expect, it } from 'vitest';
import { connectClient, fitq, newQueue } from '../support/fitq.js';

/** "2030-01-15 22:00:00" in `timeZone`, as fitq shows a time of another day. */
function localDateTime(epochMs: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(epochMs);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')}`;
}

/** The cells of `fitq runs --columns id,staged,why`, for the one run listed. */
function onlyRow(stdout: string): { staged: string; why: string } {
  const [header = '', row = '', ...rest] = stdout.split('\n');
  expect(rest).toEqual([]);
  const stagedAt = header.indexOf('STAGED');
  const whyAt = header.indexOf('WHY');
  return { staged: row.slice(stagedAt, whyAt).trim(), why: row.slice(whyAt) };
}

describe('times in the local time zone', () => {
  it.each([
    ['America/New_York', '2030-01-15 22:00:00'],
    ['Asia/Tokyo', '2030-01-16 12:00:00'],
  ])('TZ=%s: a run that begins later says when in local time, in fitq runs and runs show, as its STAGED cell does', async (zone, shown) => {
    const queue = newQueue();
    const env = { TZ: zone };
    const staged = await fitq(['stage', '--begin', '2030-01-15T22:00:00-05:00', '--json', '--', 'true'], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const listed = await fitq(['runs', '--json'], { queue, env });
    const [run] = (JSON.parse(listed.stdout) as { runs: { id: string; stagedAt: number; beginAt: number; reason: string }[] }).runs;
    // JSON: epoch ms stay numbers; the reason is the sentence fitq runs shows.
    expect(run!.beginAt).toBe(Date.parse('2030-01-16T03:00:00Z'));
    expect(run!.reason).toBe(`begins at ${shown}`);

    const table = await fitq(['runs', '--columns', 'id,staged,why'], { queue, env });
    expect(table.exitCode, table.stderr).toBe(0);
    const row = onlyRow(table.stdout);
    expect(row.why).toBe(`begins at ${shown}`);
    // Staged just now: today's time of day, in the same zone.
    expect(localDateTime(run!.stagedAt, zone).endsWith(` ${row.staged}`)).toBe(true);

    const show = await fitq(['runs', 'show', run!.id], { queue, env });
    expect(show.exitCode, show.stderr).toBe(0);
    expect(show.stdout).toContain(`\nreason:    begins at ${shown}\n`);
    expect(show.stdout).toContain(`\nbegins:    ${shown}`);
    expect(show.stdout).toContain(`\nstaged:    ${row.staged}\n`);
    expect(`${table.stdout}\n${show.stdout}`).not.toMatch(/\d\d:\d\d:\d\d(\.\d+)?Z/);
  });

  it('TZ=America/New_York: --begin 22:00 begins at 22:00 local time and says so', async () => {
    const queue = newQueue();
    const env = { TZ: 'America/New_York' };
    const staged = await fitq(['stage', '--begin', '22:00', '--', 'true'], { queue, env });
    expect(staged.exitCode, staged.stderr).toBe(0);
    const id = staged.stdout.trim();
    const client = await connectClient(queue);
    const run = await client.getRun(id);
    expect(localDateTime(run.beginAt!, 'America/New_York')).toMatch(/ 22:00:00$/);
    const why = onlyRow((await fitq(['runs', '--columns', 'id,staged,why'], { queue, env })).stdout).why;
    // Today's 22:00 shows as the time alone; tomorrow's with its date.
    expect(why).toMatch(/^begins at (\d{4}-\d\d-\d\d )?22:00:00$/);
  });
});
