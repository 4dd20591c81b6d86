/**
 * The output schema of a wait outlook (model/wait-outlook.ts): what
 * why_waiting and preview_stage answer with, beside fitq's one line.
 */
import { z } from 'zod';

const gap = z.object({ resource: z.string(), need: z.string(), have: z.string() });

export const waitOutlookSchema = z.object({
  runnable: z.boolean().describe('Some live worker could run it once it has room; false: it never starts as things are'),
  reason: z.string().describe("fitq's answer in one line"),
  paused: z.boolean(),
  drained: z.array(z.string()).describe('Live workers that are drained'),
  pool: z.object({
    lacksNow: z.array(gap).describe('Pool resources with less free now than it needs (have: free)'),
    beyondCapacity: z.array(gap).describe('Pool resources it needs more of than there is at all (have: capacity)'),
  }),
  quota: z.object({ owner: z.string(), name: z.string(), need: z.string(), used: z.string(), limit: z.string() }).optional().describe('A quota it would take its user or project past'),
  workers: z.array(
    z.object({
      worker: z.string(),
      startsNow: z.boolean().describe("This worker's next claim would start it"),
      devices: z.array(z.number()).optional().describe('The GPU devices it would get'),
      missing: z.array(z.string()).describe('Resources it demands that this worker does not have'),
      beyondCapacity: z.array(gap).describe('Needs beyond the whole capacity here (have: capacity): it never fits here'),
      lacksNow: z.array(gap).describe('Needs beyond what is free here now (have: free): it fits once runs end'),
      slotsFull: z.object({ running: z.number(), concurrency: z.number() }).optional(),
      heldFor: z.string().optional().describe('The blocked run this worker holds its free capacity for, which goes first'),
      unusableDevices: z.array(z.object({ device: z.number(), state: z.string(), why: z.string() })),
      overTimeLimit: z.object({ limitMs: z.number(), maxMs: z.number() }).optional().describe("Its time limit is above this worker's --max-time-limit"),
    }),
  ),
});
