/**
 * Checks an input against a workflow's `input_schema` (JSON Schema 2020-12) before it is sent. Loaded on
 * demand (its own chunk, outside the first bundle). It is @cfworker/json-schema rather than Ajv, which the
 * service uses: Ajv compiles schemas to code with `new Function`, which the console's
 * Content-Security-Policy (no 'unsafe-eval') forbids; this validator interprets the schema instead. The
 * service validates again and stays the judge: its `invalid_input` details are shown the same way.
 */
export interface InputProblem {
  path: string;
  message: string;
}

export async function validateInput(
  schema: Record<string, unknown> | undefined,
  input: unknown,
): Promise<InputProblem[]> {
  if (!schema) return [];
  const { Validator } = await import('@cfworker/json-schema');
  const result = new Validator(schema, '2020-12', false).validate(input);
  if (result.valid) return [];
  // Keep the errors that say what is wrong, not the ones that only say "a property had an error".
  const leaves = result.errors.filter(
    (e) => !['properties', 'allOf', 'items', 'prefixItems', '$ref'].includes(e.keyword),
  );
  return (leaves.length > 0 ? leaves : result.errors).map((e) => {
    const at = e.instanceLocation.replace(/^#/, '');
    // As the service words it: the missing property in the path, where a person looks for it.
    const missing = e.keyword === 'required' ? /property "(.*)"/.exec(e.error)?.[1] : undefined;
    if (missing !== undefined) return { path: `${at}/${missing}`, message: 'is required' };
    return { path: at || '/', message: e.error };
  });
}
