/** The approval step's activity: records that a decision was requested (the wait itself is the workflow's). */
import type { ApprovalRequestSpec } from '../shared/execution-types';

export interface ApprovalRequested {
  requested_at: string;
}

export async function approval(_request: ApprovalRequestSpec): Promise<ApprovalRequested> {
  return { requested_at: new Date().toISOString() };
}
