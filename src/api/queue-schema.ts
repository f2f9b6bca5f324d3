/** GET /v1/workflows/{id}/queue (docs/flow-control.md#the-queue): its response schema and example. */
import { z } from 'zod';
import type { QueueView } from '../../core/flow-control';

const count = z.number().int().min(0);

export const queueSchema: z.ZodType<QueueView> = z
  .object({
    queued: count.meta({ description: 'Executions of the workflow queued (waiting for a place).' }),
    open: count.meta({
      description: 'Executions of the workflow open (running or waiting) under its concurrency.',
    }),
    keys: z
      .array(
        z.object({
          key: z.string().nullable().meta({
            description:
              'The value of the concurrency key; null for a workflow whose concurrency has no key expression.',
          }),
          queued: count,
          open: count,
        }),
      )
      .meta({ description: 'The 20 busiest keys (queued and open together), busiest first.' }),
  })
  .meta({ id: 'WorkflowQueue' });

export const QUEUE_EXAMPLE: QueueView = {
  queued: 7,
  open: 5,
  keys: [
    { key: 'acme', queued: 6, open: 2 },
    { key: 'globex', queued: 1, open: 2 },
    { key: 'initech', queued: 0, open: 1 },
  ],
};
