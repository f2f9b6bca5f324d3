/**
 * `switchyard runs cancel|retry|rerun [ID...] [--workflow W] [--status S] [--error-code C]
 * [--started-after T] [--started-before T] [--dry-run]`: a bulk operation (docs/operations.md#bulk-operations)
 * over the executions the filter matches (or the ids given). `--dry-run` prints how many match; otherwise
 * the command follows the operation to its end, with a progress bar on a terminal, and exits 1 when some
 * action failed.
 */
import type {
  BulkOperation,
  BulkOperationAccepted,
  BulkOperationDryRun,
  BulkOperationRequest,
} from '../client';
import { EXIT, expectCommand, jsonObjectOption, UsageError } from './args';
import type { Command } from './command';

const FILTER_OPTIONS = [
  'workflow',
  'status',
  'error-code',
  'started-after',
  'started-before',
  'dry-run',
] as const;
/** How often the progress is read. */
const POLL_MS = 500;
const BAR_WIDTH = 30;

export async function bulkRuns(
  { parsed, client, print, io }: Command,
  action: 'cancel' | 'retry' | 'rerun',
): Promise<number> {
  const v = parsed.values;
  const own =
    action === 'retry' ? (['input'] as const) : action === 'rerun' ? (['workflow-version'] as const) : [];
  const ids = expectCommand(parsed, `runs ${action}`, [...FILTER_OPTIONS, ...own], {
    min: 0,
    max: 1000,
    words: 2,
  });
  const filter: BulkOperationRequest['filter'] = {
    ...(v.workflow !== undefined && { workflow: v.workflow }),
    ...(v.status !== undefined && {
      status: v.status as NonNullable<BulkOperationRequest['filter']['status']>,
    }),
    ...(v['error-code'] !== undefined && { error_code: v['error-code'] }),
    ...(v['started-after'] !== undefined && { started_after: v['started-after'] }),
    ...(v['started-before'] !== undefined && { started_before: v['started-before'] }),
    ...(ids.length > 0 && { execution_ids: ids }),
  };
  if (Object.keys(filter).length === 0)
    throw new UsageError(
      `runs ${action} needs execution ids or a filter (--workflow, --status, --error-code, --started-after, --started-before)`,
    );
  const version = v['workflow-version'];
  if (version !== undefined && version !== 'same' && version !== 'latest')
    throw new UsageError(`--workflow-version of runs rerun is 'same' or 'latest', not '${version}'`);
  const input = jsonObjectOption(v.input, 'input');
  const request: BulkOperationRequest = {
    action,
    filter,
    ...(v['dry-run'] && { dry_run: true }),
    ...(input !== undefined && { input }),
    ...(version !== undefined && { version }),
  };
  const api = client();
  const created = await api.bulkOperations.create(request);
  if (v['dry-run']) {
    const dry = created as BulkOperationDryRun;
    print(
      dry,
      () =>
        `${dry.matched} execution(s) match; ${action} would act on those that qualify.\n${dry.sample.join('\n')}`,
    );
    return EXIT.ok;
  }
  const { id } = created as BulkOperationAccepted;
  const progress = !v.json && process.stderr.isTTY === true;
  let op = await api.bulkOperations.get(id);
  while (op.status === 'running') {
    if (progress) io.stderr(`\r${bar(op)}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    op = await api.bulkOperations.get(id);
  }
  if (progress) io.stderr(`\r${bar(op)}\n`);
  print(op, () => describe(op));
  return op.failed > 0 ? EXIT.failed : EXIT.ok;
}

/** `[#########.....] 12/30  succeeded 10  failed 0  skipped 2` */
function bar(op: BulkOperation): string {
  const done = op.succeeded + op.failed + op.skipped;
  const filled = op.matched === 0 ? BAR_WIDTH : Math.round((done / op.matched) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${op.matched}  succeeded ${op.succeeded}  failed ${op.failed}  skipped ${op.skipped}`;
}

function describe(op: BulkOperation): string {
  const lines = [
    `Bulk ${op.action} ${op.id}: ${op.status}; ${op.matched} matched, ${op.succeeded} succeeded, ${op.failed} failed, ${op.skipped} skipped`,
  ];
  for (const error of op.errors) lines.push(`  ${error.execution_id}: ${error.code}: ${error.message}`);
  return lines.join('\n');
}
