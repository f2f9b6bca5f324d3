/**
 * Namespace preparation at start: the custom search attributes every execution carries, and a
 * retention long enough that finished runs stay readable and retryable (a fresh dev server keeps
 * closed runs for 24 h only). Both are idempotent; on Temporal Cloud, where these are managed in the
 * Cloud console, a refusal is logged with what to do rather than stopping the service.
 */
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Logger } from '../logger';
import { SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import type { TemporalConnection } from './connection';

export const INDEXED_VALUE_TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  BOOL: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
};

const DAY_SECONDS = 24 * 60 * 60;

export async function ensureSearchAttributes(
  { connection, namespace }: TemporalConnection,
  logger: Logger,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const custom = existing.customAttributes ?? {};
  const missing = SEARCH_ATTRIBUTES.filter((key) => !(key.name in custom));
  if (missing.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_VALUE_TYPES[key.type]!])),
    });
    logger.info({ added: missing.map((key) => key.name) }, 'Registered search attributes');
  } catch (error) {
    throw new Error(
      `Search attributes ${missing.map((k) => `${k.name} (${k.type})`).join(', ')} are missing on namespace "${namespace}" ` +
        `and could not be added (${(error as Error).message}). Add them (Temporal Cloud: in the namespace settings; ` +
        `self-hosted: temporal operator search-attribute create) and start again.`,
      { cause: error },
    );
  }
}

export async function ensureRetention(
  { connection, namespace }: TemporalConnection,
  days: number,
  logger: Logger,
): Promise<void> {
  const described = await connection.workflowService.describeNamespace({ namespace });
  const current = Number(described.config?.workflowExecutionRetentionTtl?.seconds ?? 0);
  if (current >= days * DAY_SECONDS) return;
  try {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(days * DAY_SECONDS * 1000) },
    });
    logger.info({ namespace, days }, 'Raised namespace retention');
  } catch (error) {
    logger.warn(
      { namespace, days, currentDays: current / DAY_SECONDS, err: (error as Error).message },
      'Could not raise namespace retention; finished executions disappear after the current retention',
    );
  }
}
