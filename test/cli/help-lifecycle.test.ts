/**
 * `fitq --help` ends with the run lifecycle on one screen: every command and
 * flag it shows must exist, so the cheat sheet cannot drift from the CLI.
 */
import { describe, expect, it } from 'vitest';
import { LIFECYCLE } from '../../src/help.js';
import { fitq, newQueue } from '../support/fitq.js';

/** Each `fitq …` invocation of a cheat-sheet line: its command words and the flags it shows. */
function invocations(): { command: string[]; flags: string[] }[] {
  return LIFECYCLE.flatMap(([line]) =>
    line.split(/, (?=fitq )/).map((invocation) => {
      const words = invocation.split(/\s+/).slice(1);
      const end = words.findIndex((word) => !/^[a-z]+$/.test(word));
      return {
        command: end < 0 ? words : words.slice(0, end),
        flags: [...invocation.matchAll(/(?<![\w-])(--?[a-z][a-z-]*)/g)].map((match) => match[1]!).filter((flag) => flag !== '--'),
      };
    }),
  );
}

describe('fitq --help', () => {
  it('shows the run lifecycle after the commands', async () => {
    const { exitCode, stdout } = await fitq(['--help'], { queue: newQueue() });
    expect(exitCode).toBe(0);
    const section = stdout.slice(stdout.indexOf('RUN LIFECYCLE'));
    expect(stdout.indexOf('COMMANDS')).toBeLessThan(stdout.indexOf('RUN LIFECYCLE'));
    for (const [line, peer] of LIFECYCLE) {
      expect(section).toContain(line);
      expect(section).toContain(peer);
    }
  });

  it.each(invocations().map((entry) => [entry.command.join(' '), entry.flags] as const))(
    'fitq %s exists with the flags the lifecycle shows (%j)',
    async (command, flags) => {
      const { exitCode, stdout, stderr } = await fitq([...command.split(' '), '--help'], { queue: newQueue() });
      expect(exitCode, stderr).toBe(0);
      for (const flag of flags) expect(stdout, `fitq ${command} ${flag}`).toMatch(new RegExp(`(^|[\\s,])${flag}(?![\\w-])`, 'm'));
    },
  );
});
