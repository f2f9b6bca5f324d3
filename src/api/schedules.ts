/**
 * The schedule of a workflow with a schedule trigger (docs/api.md#schedules): read it, pause and resume it,
 * run it now, backfill a past window. The Temporal Schedule is the one src/definitions/schedule-sync.ts keeps.
 */
import { z } from 'zod';
import { SCHEDULE_OVERLAP_POLICIES } from '../../core/definitions/schema';
import { backfillSchedule, MAX_BACKFILL_RUNS } from '../schedules/backfill';
import { MAX_NOTE_LENGTH, pauseSchedule, resumeSchedule, runScheduleNow } from '../schedules/controls';
import { NEXT_RUNS_SHOWN, readSchedule } from '../schedules/read';
import { RECENT_RUNS_SHOWN } from '../schedules/recent-runs';
import { scheduledWorkflow, scheduleNotFound, type ScheduledWorkflow } from '../schedules/scheduled-workflow';
import type { Services } from '../services';
import { defineRoute, type AnyRoute, type ErrorExample, type RouteContext } from './route';
import { BACKFILL_WINDOW } from './semantic-errors';
import { acceptedExample, acceptedSchema, EXAMPLE_EXECUTION_ID, EXECUTION_LINKS, timestamp } from './schemas';

const idParams = z.object({ id: z.string() });

const scheduleSchema = z
  .object({
    spec: z
      .union([z.object({ cron: z.string() }), z.object({ every: z.string() })])
      .meta({ description: "The schedule's `cron` or `every`, as the workflow's trigger states it." }),
    timezone: z.string().meta({ description: 'The time zone of `cron` (UTC unless the trigger names one).' }),
    overlap: z.enum(SCHEDULE_OVERLAP_POLICIES).meta({
      description: 'What happens to a run that is due while the previous one is still open (default skip).',
    }),
    paused: z.boolean(),
    note: z
      .string()
      .nullable()
      .meta({ description: 'Why it is paused, when the pause said; null otherwise.' }),
    next_runs: z.array(timestamp).meta({
      description: `The next ${NEXT_RUNS_SHOWN} times the schedule starts a run; empty while it is paused.`,
    }),
    recent_runs: z
      .array(
        z.object({
          execution_id: z.string(),
          scheduled_at: timestamp.meta({
            description:
              'When the run was due (a backfilled run: its time in the past; run now: when it was asked).',
          }),
        }),
      )
      .meta({
        description: `Up to ${RECENT_RUNS_SHOWN} of the latest runs the schedule started (its own, backfilled ones and run now), newest first. Eventually consistent: a run appears within about a second of its start.`,
      }),
  })
  .meta({ id: 'Schedule' });

const scheduleExample = {
  spec: { cron: '0 9 * * 1-5' },
  timezone: 'Europe/Paris',
  overlap: 'skip',
  paused: false,
  note: null,
  next_runs: [
    '2026-11-23T08:00:00.000Z',
    '2026-11-24T08:00:00.000Z',
    '2026-11-25T08:00:00.000Z',
    '2026-11-26T08:00:00.000Z',
    '2026-11-27T08:00:00.000Z',
  ],
  recent_runs: [
    {
      execution_id: 'ex_4fT9qLm2Xc8Rb7Kd1Wz3-2026-11-20T08:00:00Z',
      scheduled_at: '2026-11-20T08:00:00.000Z',
    },
    { execution_id: EXAMPLE_EXECUTION_ID, scheduled_at: '2026-11-19T15:42:07.512Z' },
  ],
};

const pauseBody = z
  .strictObject({
    note: z
      .string()
      .max(MAX_NOTE_LENGTH)
      .optional()
      .meta({
        description: `Why it is paused (at most ${MAX_NOTE_LENGTH} characters); the schedule's read shows it.`,
      }),
  })
  .meta({ example: { note: 'CRM maintenance until Monday' } });
type PauseBody = z.infer<typeof pauseBody>;

const backfillBody = z
  .strictObject({
    start: z.iso
      .datetime({ offset: true })
      .meta({ description: 'RFC 3339; a run due at this time is in the window.' }),
    end: z.iso.datetime({ offset: true }).meta({
      description:
        'RFC 3339, later than start and not in the future; a run due at this time is not in the window.',
    }),
  })
  .meta({ example: { start: '2026-11-16T00:00:00Z', end: '2026-11-21T00:00:00Z' } });

const backfillAcceptedSchema = z
  .object({
    status: z.literal('accepted'),
    count: z.number().int().min(0).max(MAX_BACKFILL_RUNS).meta({ description: 'How many runs start.' }),
  })
  .meta({ id: 'BackfillAccepted' });

const NOT_FOUND_EXAMPLE: ErrorExample = {
  code: 'schedule_not_found',
  message: scheduleNotFound(
    'customer-onboarding',
    "its latest version (3) has a trigger of type 'api'; save a version with a schedule trigger first.",
  ).message,
};

const SCHEDULE_LINKS = {
  getSchedule: { operationId: 'getSchedule', parameters: { id: '$request.path.id' } },
};

type Located = Pick<RouteContext<{ id: string }, unknown, unknown>, 'services' | 'auth' | 'params'>;
const locate = ({ services, auth, params }: Located) =>
  scheduledWorkflow(services, auth.workspaceId, params.id);

/** Pause and resume answer the schedule as a read shows it afterwards. */
function stateRoute(
  action: 'pause' | 'resume',
  change: (services: Services, scheduled: ScheduledWorkflow, body: PauseBody | undefined) => Promise<void>,
): AnyRoute {
  return defineRoute({
    method: 'post',
    path: `/v1/workflows/{id}/schedule/${action}`,
    operationId: `${action}Schedule`,
    summary: action === 'pause' ? 'Pause the schedule' : 'Resume a paused schedule',
    description:
      action === 'pause'
        ? 'No run starts at its times until it is resumed (run now and backfill still work). The pause lasts across new versions of the workflow.'
        : "Runs start at the schedule's times again; times missed while it was paused are not run (backfill runs them).",
    tag: 'Schedules',
    auth: 'write',
    params: idParams,
    ...(action === 'pause' ? { body: pauseBody } : {}),
    responses: {
      200: {
        description: 'The schedule',
        schema: scheduleSchema,
        example:
          action === 'pause'
            ? { ...scheduleExample, paused: true, note: 'CRM maintenance until Monday', next_runs: [] }
            : scheduleExample,
      },
    },
    errors: [404],
    errorExamples: { 404: NOT_FOUND_EXAMPLE },
    handler: async (ctx) => {
      const scheduled = await locate(ctx);
      await change(ctx.services, scheduled, ctx.body);
      return { status: 200, body: await readSchedule(ctx.services, scheduled) };
    },
  });
}

export function scheduleRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/workflows/{id}/schedule',
      operationId: 'getSchedule',
      summary: "Read a workflow's schedule",
      description:
        'For a workflow whose latest version has a schedule trigger (404 schedule_not_found otherwise): its spec, whether it is paused, its next runs and its recent runs.',
      tag: 'Schedules',
      auth: 'read',
      params: idParams,
      responses: { 200: { description: 'The schedule', schema: scheduleSchema, example: scheduleExample } },
      errors: [404],
      errorExamples: { 404: NOT_FOUND_EXAMPLE },
      handler: async (ctx) => ({
        status: 200,
        body: await readSchedule(ctx.services, await locate(ctx)),
      }),
    }),
    stateRoute('pause', (services, scheduled, body) => pauseSchedule(services, scheduled, body?.note)),
    stateRoute('resume', resumeSchedule),
    defineRoute({
      method: 'post',
      path: '/v1/workflows/{id}/schedule/run',
      operationId: 'runSchedule',
      summary: 'Start one run of the schedule now',
      description:
        "Starts an execution of the latest version with the schedule's input and trigger type schedule, at once, paused or not and whatever `overlap` says. It appears among the schedule's recent runs.",
      tag: 'Schedules',
      auth: 'write',
      params: idParams,
      responses: {
        202: {
          description: 'Accepted: the execution runs',
          schema: acceptedSchema,
          example: acceptedExample,
          links: { ...EXECUTION_LINKS, ...SCHEDULE_LINKS },
        },
      },
      errors: [404],
      errorExamples: { 404: NOT_FOUND_EXAMPLE },
      handler: async (ctx) => {
        const executionId = await runScheduleNow(ctx.services, await locate(ctx), ctx.requestId);
        return { status: 202, body: { status: 'accepted', execution_id: executionId } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/workflows/{id}/schedule/backfill',
      operationId: 'backfillSchedule',
      summary: 'Start the runs the schedule would have started in a past window',
      description:
        `The window is [start, end): a run due at start is in it, one due at end is not. Every run starts, even ` +
        `while others are open (overlap allow_all), paused or not; at most ${MAX_BACKFILL_RUNS} per request. A ` +
        "backfilled run's execution id is the one a scheduled run at that time has: a time whose run already " +
        'ended runs again under the same id, and one whose run is still open is not started again.',
      tag: 'Schedules',
      auth: 'write',
      params: idParams,
      body: backfillBody,
      bodyRequired: true,
      responses: {
        202: {
          description: 'Accepted: the runs start over the next seconds (about ten a second)',
          schema: backfillAcceptedSchema,
          example: { status: 'accepted', count: 5 },
          links: SCHEDULE_LINKS,
        },
      },
      errors: [404],
      errorExamples: { 404: NOT_FOUND_EXAMPLE },
      semanticErrors: BACKFILL_WINDOW,
      handler: async (ctx) => {
        const { start, end } = ctx.body;
        const count = await backfillSchedule(ctx.services, await locate(ctx), {
          start: new Date(start),
          end: new Date(end),
        });
        return { status: 202, body: { status: 'accepted', count } };
      },
    }),
  ];
}
