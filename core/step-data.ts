/** The size and depth limits of the data a step records (its input and output). */
/**
 * Largest step input and output (JSON, UTF-8 bytes) the engine records. Temporal refuses a payload above
 * 2 MiB (`limit.blobSize.error`), and a step's record (input and output together) travels as one local
 * activity result: the two limits add up to less. Past them the step fails with a clear code instead of
 * leaving a run that Temporal cannot record. Connector requests are small in practice; responses are
 * capped at 1 MiB by default (MAX_RESPONSE_BYTES).
 */
export const MAX_STEP_INPUT_BYTES = 512 * 1024;
export const MAX_STEP_OUTPUT_BYTES = 1280 * 1024;

/**
 * Deepest nesting of arrays and objects in a step's input or output. JSON.stringify, Temporal's payload
 * converter and the API recurse, and overflow the stack some thousands of levels down; a third-party
 * response (or a recursive expression) can nest deeper than that.
 */
export const MAX_STEP_DATA_DEPTH = 256;

/** Step error codes of data past MAX_STEP_INPUT_BYTES / MAX_STEP_OUTPUT_BYTES or MAX_STEP_DATA_DEPTH. */
export const DATA_LIMIT_CODES = {
  /** A step's resolved configuration (after templates), or the data a rules step reads. */
  input: 'input_too_large',
  /** What a step activity produced. */
  output: 'output_too_large',
} as const;

/** The size of a value as JSON in UTF-8 bytes, as Temporal's JSON payload converter encodes it. */
export function jsonByteLength(value: unknown): number {
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) return 0;
  let bytes = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < json.length) {
      bytes += 4; // a surrogate pair: one 4-byte character
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** Whether arrays and objects in a value nest deeper than `max` levels (walked without recursion). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * Why a step's input or output cannot be recorded (too deep, or larger than `maxBytes` as JSON), or
 * undefined when it can.
 */
export function stepDataProblem(value: unknown, maxBytes: number): string | undefined {
  if (nestedDeeperThan(value, MAX_STEP_DATA_DEPTH))
    return `is nested deeper than ${MAX_STEP_DATA_DEPTH} levels`;
  const size = jsonByteLength(value);
  if (size > maxBytes) return `is ${size} bytes as JSON, more than the limit of ${maxBytes} bytes`;
  return undefined;
}
