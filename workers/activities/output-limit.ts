/**
 * Step activities refuse outputs that Temporal could not record (MAX_STEP_OUTPUT_BYTES, below its 2 MiB
 * payload limit, and MAX_STEP_DATA_DEPTH): the step fails at once with `output_too_large`, where an
 * oversized result would be refused by the SDK or the server with a generic error, and one nested
 * thousands deep would overflow the stack of whatever serialized it next.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { DATA_LIMIT_CODES, MAX_STEP_OUTPUT_BYTES, stepDataProblem } from '../../core/step-data';

export function limitOutput<A extends unknown[], R>(
  activity: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    const output = await activity(...args);
    const problem = stepDataProblem(output, MAX_STEP_OUTPUT_BYTES);
    if (problem) {
      // Not retryable: the same step would build the same output again.
      throw ApplicationFailure.nonRetryable(`The step's output ${problem}.`, DATA_LIMIT_CODES.output);
    }
    return output;
  };
}
