/**
 * A run's local activities as its history recorded them: each marker's activity type (from its `data`
 * payload) and its result, in order. Local activities are not named in Temporal's events otherwise.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

export interface LocalActivityMarker<T = unknown> {
  type: string;
  result: T;
}

export async function localActivityMarkers<T = unknown>(
  client: Client,
  executionId: string,
): Promise<LocalActivityMarker<T>[]> {
  const history = await client.workflow.getHandle(executionId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const details = event.markerRecordedEventAttributes?.details;
    const data = details?.['data']?.payloads?.[0]?.data;
    if (!data) return [];
    const { activity_type } = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string };
    const payload = details['result']?.payloads?.[0];
    return [
      {
        type: activity_type,
        result: payload ? defaultPayloadConverter.fromPayload<T>(payload) : (undefined as T),
      },
    ];
  });
}
