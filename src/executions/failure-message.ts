/**
 * A Temporal failure's message as people should read it. While payloads are encrypted, the worker's
 * failure converter (workers/failure-converter.ts) moves the message and the stack trace into an encoded
 * payload and leaves "Encoded failure" as the text; once decoded (decodeFailure in history-mapper.ts),
 * that payload holds the real message. Never the stack trace.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

/** A failure's message: its text, or what its encoded attributes hold (once decoded). */
export function failureMessage(failure: temporal.api.failure.v1.IFailure): string | undefined {
  if (failure.encodedAttributes) {
    try {
      const attributes = defaultPayloadConverter.fromPayload<{ message?: unknown } | null>(
        failure.encodedAttributes,
      );
      if (typeof attributes?.message === 'string') return attributes.message;
    } catch {
      // Still encrypted (no key here): the text Temporal keeps is all there is.
    }
  }
  return failure.message ?? undefined;
}
