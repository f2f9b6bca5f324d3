/**
 * Custom search attributes set on every execution (docs/operations.md#search-attributes), so that Temporal UI
 * and `temporal workflow list --query` find runs by workspace, workflow, version and trigger. Registered on
 * the namespace at start; docs/operations.md#search-attributes lists them.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { ExecutionInput } from './execution-types';

export const WORKSPACE_ATTRIBUTE = defineSearchAttributeKey(
  'SwitchyardWorkspace',
  SearchAttributeType.KEYWORD,
);
export const WORKFLOW_ATTRIBUTE = defineSearchAttributeKey('SwitchyardWorkflow', SearchAttributeType.KEYWORD);
export const VERSION_ATTRIBUTE = defineSearchAttributeKey('SwitchyardVersion', SearchAttributeType.INT);
export const TRIGGER_ATTRIBUTE = defineSearchAttributeKey('SwitchyardTrigger', SearchAttributeType.KEYWORD);
/** True while an approval step waits for a decision: the difference between `running` and `waiting`. */
export const WAITING_ATTRIBUTE = defineSearchAttributeKey('SwitchyardWaiting', SearchAttributeType.BOOL);
/**
 * A failed execution's error code (`GET /v1/executions?error_code=`), set as it fails; absent otherwise.
 * Runs that failed before it existed have none (workers/workflows/execution.ts, ERROR_CODE_PATCH).
 */
export const ERROR_CODE_ATTRIBUTE = defineSearchAttributeKey(
  'SwitchyardErrorCode',
  SearchAttributeType.KEYWORD,
);

/**
 * True while flow control holds the run back (`queued`, docs/flow-control.md): set when its admission
 * queued it, false once admitted; absent on runs that never queued.
 */
export const QUEUED_ATTRIBUTE = defineSearchAttributeKey('SwitchyardQueued', SearchAttributeType.BOOL);

export const SEARCH_ATTRIBUTES = [
  WORKSPACE_ATTRIBUTE,
  WORKFLOW_ATTRIBUTE,
  VERSION_ATTRIBUTE,
  TRIGGER_ATTRIBUTE,
  WAITING_ATTRIBUTE,
  ERROR_CODE_ATTRIBUTE,
  QUEUED_ATTRIBUTE,
] as const;

/** The search attributes an execution starts with (the API's trigger and a parent's workflow step alike). */
export function executionSearchAttributes(input: ExecutionInput) {
  return [
    { key: WORKSPACE_ATTRIBUTE, value: input.workspaceId },
    { key: WORKFLOW_ATTRIBUTE, value: input.workflow.id },
    { key: VERSION_ATTRIBUTE, value: input.workflow.version },
    { key: TRIGGER_ATTRIBUTE, value: input.trigger.type },
    { key: WAITING_ATTRIBUTE, value: false },
    // A debounced run is queued from its first moment, until its key's quiet time ends (no upsert needed).
    ...(input.debounce ? [{ key: QUEUED_ATTRIBUTE, value: true }] : []),
  ];
}
