/**
 * The statuses a run ends with are one list in TypeScript (ENDED_STATUSES)
 * and one Lua function (includes/lifecycle/isEnded.lua): the scripts must agree with it.
 */
import { describe, expect, it } from 'vitest';
import { RUN_STATUSES, ENDED_STATUSES } from '../../src/model/run-record.js';
import { connectClient, newQueue } from '../support/fitq.js';
import { readFileSync } from 'node:fs';

const IS_ENDED = readFileSync(new URL('../../src/queue/lua/includes/lifecycle/isEnded.lua', import.meta.url), 'utf8');

describe('ended statuses', () => {
  it('isEnded.lua says ended for exactly ENDED_STATUSES', async () => {
    const client = await connectClient(newQueue());
    const script = `${IS_ENDED}\nlocal out = {}\nfor i, status in ipairs(ARGV) do out[i] = isEnded(status) and 1 or 0 end\nreturn out`;
    const statuses = [...RUN_STATUSES, 'stopped', ''];
    const verdicts = (await client.redis.eval(script, 0, ...statuses)) as number[];
    expect(statuses.filter((_, i) => verdicts[i] === 1)).toEqual([...ENDED_STATUSES].sort((a, b) => statuses.indexOf(a) - statuses.indexOf(b)));
  });
});
