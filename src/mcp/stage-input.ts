/**
 * What stage_run and preview_stage take: every option of `fitq stage`, as
 * JSON an agent writes (arrays as indices or rows of parameters,
 * dependencies as groups by kind, retries as an object), and the
 * StageRequest it makes. fitq's own checks judge the values (bad ones come
 * back as fitq's one-line error).
 */
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { DEPENDENCY_KINDS } from '../model/parked.js';
import type { StageRequest } from '../model/stage.js';
import { quote } from '../text/quote.js';
import { parseDuration } from '../units/duration.js';

export const stageInput = {
  command: z.array(z.string()).min(1).describe('The argv to run (no shell unless `shell`)'),
  shell: z.boolean().optional().describe('Run the words joined with sh -c'),
  resources: z.string().optional().describe('Demands, as -r takes them: "gpu=1 mem=8G license=1"'),
  gpus: z.string().optional().describe('Pin to these GPU devices, as --gpus: "0,1"'),
  labels: z.record(z.string()).optional(),
  env: z.record(z.string()).optional().describe('Added to the environment the run starts with'),
  cwd: z.string().optional().describe("Working directory on the worker; default the server's"),
  priority: z.number().int().optional().describe('Higher runs first; default 0'),
  runId: z.string().optional().describe('An id of your choosing; must be new ({index} for an array)'),
  repeat: z.number().int().min(1).optional().describe('Stage this many identical runs'),
  timeLimit: z.string().optional().describe('As --time-limit: "30m", "2h"'),
  timeSignal: z.string().optional().describe('As --time-signal: "SIGUSR1@120s", the signal and how long before the limit'),
  retries: z.number().int().min(0).optional().describe('Times it is staged again when its worker dies under it'),
  retryOnFailure: z
    .object({
      max: z.number().int().min(0).describe('Most re-stages'),
      exitCodes: z.array(z.number().int().min(0).max(255)).optional().describe('Only for these exit codes'),
      backoff: z.string().optional().describe('Wait this long before it may start again: "30s"'),
      exponential: z.boolean().optional().describe('Double the backoff each time'),
      onTimeout: z.boolean().optional().describe('A run past its time limit counts as a failure'),
    })
    .optional()
    .describe('Stage it again when it fails on its own (--retry-on-failure)'),
  hold: z.boolean().optional().describe('Stage it held: it starts only once released'),
  beginAt: z.string().optional().describe('Start no earlier than this time, ISO 8601: "2026-05-01T08:00:00Z"'),
  delay: z.string().optional().describe('Start no earlier than this long after staging: "10m"'),
  after: z
    .array(
      z.object({
        kind: z.enum(DEPENDENCY_KINDS).describe('ok: every one completed; any: one completed; notok: every one ended without success; end: every one ended'),
        runs: z.array(z.string().min(1)).min(1).describe('Run ids, array ids (every run of it), or unique prefixes'),
      }),
    )
    .optional()
    .describe('Runs it waits for, by kind (Slurm afterok, afterany...): every group must hold'),
  keepIfDependencyFails: z.boolean().optional().describe('A dependency that can never be met leaves it staged instead of canceling it'),
  array: z
    .object({
      indices: z.array(z.number().int().min(0)).optional().describe('The index of each run ({index}, FITQ_ARRAY_INDEX)'),
      params: z.array(z.record(z.string())).optional().describe('A row of parameters per run ({name} in the command, FITQ_PARAM_NAME)'),
      limit: z.number().int().min(0).optional().describe('At most this many of its runs at once, across all workers (Slurm %N)'),
    })
    .optional()
    .describe('Stage an array of runs, as --array/--param: indices, or rows of parameters'),
  preemptible: z.boolean().optional().describe('A higher-priority run may stop it (it is staged again)'),
  preemptSignal: z.string().optional().describe('With preemptible: its checkpoint signal and grace, "SIGUSR1@60s"'),
  preemptAfter: z.string().optional().describe('With preemptible: never preempted before it ran this long, "10m"'),
  notify: z.string().optional().describe('http(s) URL its worker POSTs the run\'s record to when it ends'),
  output: z
    .object({ stdout: z.string(), stderr: z.string().optional(), append: z.boolean().optional() })
    .optional()
    .describe('Files on the worker its output also goes to (--output/--error)'),
};

type StageInput = z.objectOutputType<typeof stageInput, z.ZodTypeAny>;

/** The request a tool's input stands for. Throws UsageError for a time fitq cannot read. */
export function stageRequestOf(input: StageInput): StageRequest {
  const { beginAt, delay, after, retryOnFailure, array, output, ...rest } = input;
  const request: StageRequest = { ...definedOnly(rest), command: rest.command };
  if (beginAt !== undefined) {
    const at = Date.parse(beginAt);
    if (Number.isNaN(at)) throw new UsageError(`beginAt ${quote(beginAt)} is not an ISO 8601 time, like 2026-05-01T08:00:00Z`);
    request.beginAt = at;
  }
  if (delay !== undefined) request.delayMs = parseDuration('delay', delay);
  if (after !== undefined) request.after = after.map(({ kind, runs }) => ({ kind, ids: runs }));
  if (retryOnFailure !== undefined) {
    const { max, exitCodes, backoff, exponential, onTimeout } = retryOnFailure;
    request.retry = {
      max,
      ...(exitCodes === undefined ? {} : { exitCodes }),
      ...(backoff === undefined ? {} : { backoffMs: parseDuration('retryOnFailure.backoff', backoff) }),
      ...(exponential ? { exponential } : {}),
      ...(onTimeout ? { onTimeout } : {}),
    };
  }
  if (array !== undefined) request.array = definedOnly(array);
  if (output !== undefined) request.output = { ...definedOnly(output), stdout: output.stdout };
  return request;
}

/** The object without its undefined entries (a tool's input leaves out what the client did not give). */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
