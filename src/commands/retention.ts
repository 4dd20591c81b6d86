import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import type { RetentionState } from '../client.js';
import { formatDurationSpec, parseDuration } from '../units/duration.js';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { RETENTION_DEFAULTS, RETENTION_SETTINGS, type Retention, type RetentionSetting } from '../model/retention.js';

/** Each setting's flag, in the order shown. */
const FLAGS: Readonly<Record<RetentionSetting, string>> = {
  keepCompleted: 'keep-completed',
  keepFailed: 'keep-failed',
  keepAgeMs: 'max-age',
};

/** A count flag: a whole number from 0, or off. */
function parseCount(flag: string, text: string): number | null {
  const trimmed = text.trim();
  if (trimmed === 'off') return null;
  const value = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(value)) {
    throw new UsageError(`expected ${flag} to be a number of runs (0 or more) or off, got ${quote(text)}`);
  }
  return value;
}

/** --max-age: a duration, or 0 or off for no age limit. */
function parseAge(text: string): number | null {
  if (text.trim() === 'off') return null;
  const ms = parseDuration('--max-age', text);
  return ms === 0 ? null : ms;
}

function show(setting: RetentionSetting, value: number | null): string {
  if (value === null) return 'off';
  return setting === 'keepAgeMs' ? formatDurationSpec(value) : String(value);
}

export default class RetentionCommand extends FitqCommand {
  static override summary = 'Show or change how many ended runs the namespace keeps, and for how long.';
  static override description =
    `Default: the last ${RETENTION_DEFAULTS.keepCompleted} completed runs and the last ${RETENTION_DEFAULTS.keepFailed} ` +
    `failed, canceled, lost, rejected and timed-out runs (together), each for ${formatDurationSpec(RETENTION_DEFAULTS.keepAgeMs ?? 0)} after it ended. ` +
    'Whenever a run ends, the oldest runs beyond these limits go, with their output (up to 100 at a time); ' +
    'changing a limit removes the runs beyond it at once. A count of 0 keeps none: each run goes as the next one of its kind ends. ' +
    'off (or --max-age 0) lifts a limit. Staged and running runs are never removed.';
  static override examples = [
    '<%= config.bin %> retention',
    '<%= config.bin %> retention --keep-completed 500 --keep-failed 5000 --max-age 14d',
    '<%= config.bin %> retention --max-age off',
    '<%= config.bin %> retention --reset',
  ];
  static override flags = {
    'keep-completed': Flags.string({ summary: 'Completed runs to keep, the most recently ended (a number, or off).' }),
    'keep-failed': Flags.string({ summary: 'Failed, canceled, lost, rejected and timed-out runs to keep, together (a number, or off).' }),
    'max-age': Flags.string({ summary: 'How long after it ended a run is kept: 7d, 12h, 30m, 1h30m (0 or off: no age limit).' }),
    reset: Flags.boolean({ summary: 'Put every setting back to its default first.' }),
    json: Flags.boolean({ summary: 'Print the settings as JSON.' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(RetentionCommand);
    // Checked before connecting: a mistake costs no round trip.
    const changes: Partial<Retention> = {};
    if (flags['keep-completed'] !== undefined) changes.keepCompleted = parseCount('--keep-completed', flags['keep-completed']);
    if (flags['keep-failed'] !== undefined) changes.keepFailed = parseCount('--keep-failed', flags['keep-failed']);
    if (flags['max-age'] !== undefined) changes.keepAgeMs = parseAge(flags['max-age']);
    const changing = flags.reset || Object.keys(changes).length > 0;
    const state = await this.withClient<RetentionState & { removed?: number }>(flags, (client) =>
      changing ? client.setRetention(changes, { reset: flags.reset }) : client.getRetention(),
    );
    if (flags.json) {
      this.log(JSON.stringify({ ...state.retention, defaults: RETENTION_DEFAULTS, stored: state.stored, ...(changing ? { removed: state.removed } : {}) }, null, 2));
      return;
    }
    const width = Math.max(...RETENTION_SETTINGS.map((setting) => FLAGS[setting].length)) + 1;
    for (const setting of RETENTION_SETTINGS) {
      const value = show(setting, state.retention[setting]);
      const fallback = show(setting, RETENTION_DEFAULTS[setting]);
      const note = state.stored.includes(setting) ? (value === fallback ? '' : ` (default ${fallback})`) : ' (default)';
      this.log(`${`${FLAGS[setting]}:`.padEnd(width)} ${value}${note}`);
    }
    if (state.removed !== undefined) this.log(`Removed ${state.removed} run${state.removed === 1 ? '' : 's'} beyond it.`);
  }
}
