/**
 * The worker's failure converter while payloads are encrypted (docs/operations.md#what-stays-in-clear):
 * Temporal keeps a failure's message and stack trace as text, so an activity's failure (a connector or ai
 * step's retries, a webhook delivery) that quotes what a receiver answered would reach history in clear.
 * With `encodeCommonAttributes` they move into a payload, which the encryption codec encrypts. Loaded by
 * the worker's main thread (DataConverter.failureConverterPath) only; workflow code keeps the default.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
