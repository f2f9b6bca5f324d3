/**
 * `switchyard schedule show|pause|resume|run|backfill WORKFLOW`: the schedule of a workflow with a schedule
 * trigger (docs/definitions.md#schedules).
 */
import type { Schedule } from '../client';
import { EXIT, expectCommand, UsageError } from './args';
import type { Command } from './command';
import { table } from './output';

export async function schedule({ parsed, sub, client, print }: Command): Promise<number> {
  const v = parsed.values;
  const words = { min: 1, max: 1, words: 2 };
  switch (sub) {
    case 'show':
    case 'pause':
    case 'resume': {
      const [id] = expectCommand(parsed, `schedule ${sub}`, sub === 'pause' ? ['note'] : [], words);
      const api = client().workflows.schedule;
      const shown =
        sub === 'show'
          ? await api.get(id!)
          : sub === 'pause'
            ? await api.pause(id!, v.note !== undefined ? { note: v.note } : {})
            : await api.resume(id!);
      print(shown, () => describeSchedule(id!, shown));
      return EXIT.ok;
    }
    case 'run': {
      const [id] = expectCommand(parsed, 'schedule run', [], words);
      const accepted = await client().workflows.schedule.run(id!);
      print(accepted, () => `Started ${accepted.execution_id}`);
      return EXIT.ok;
    }
    case 'backfill': {
      const [id] = expectCommand(parsed, 'schedule backfill', ['start', 'end'], words);
      if (v.start === undefined || v.end === undefined)
        throw new UsageError('schedule backfill needs --start TIME and --end TIME (RFC 3339)');
      const accepted = await client().workflows.schedule.backfill(id!, { start: v.start, end: v.end });
      print(
        accepted,
        () => `Backfill of ${id!}: ${accepted.count} run${accepted.count === 1 ? '' : 's'} starting`,
      );
      return EXIT.ok;
    }
    default:
      throw new UsageError(
        sub ? `unknown command 'schedule ${sub}'` : 'schedule needs show, pause, resume, run or backfill',
      );
  }
}

/** The spec, the state, the next times and the recent runs. */
export function describeSchedule(workflowId: string, shown: Schedule): string {
  const spec =
    'cron' in shown.spec ? `cron "${shown.spec.cron}" (${shown.timezone})` : `every ${shown.spec.every}`;
  const lines = [
    `Schedule of ${workflowId}: ${spec}, overlap ${shown.overlap}`,
    shown.paused ? `Paused${shown.note ? `: ${shown.note}` : ''}` : 'Active',
    '',
    shown.paused ? 'Next runs: none while paused' : 'Next runs:',
    ...shown.next_runs.map((time) => `  ${time}`),
    '',
  ];
  if (shown.recent_runs.length === 0) lines.push('No recent runs.');
  else
    lines.push(
      table(
        ['EXECUTION', 'SCHEDULED'],
        shown.recent_runs.map((run) => [run.execution_id, run.scheduled_at]),
      ),
    );
  return lines.join('\n');
}
