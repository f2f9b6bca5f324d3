/**
 * A form generated from a workflow's `input_schema`: one field per property of an object schema (string,
 * enum, number, integer, boolean), required ones marked; any other property is edited as JSON, and the
 * whole input can be edited as JSON too. The value is checked against the schema before it is sent.
 */
import { useMemo, useState } from 'preact/hooks';
import { formatJson } from '../format';
import { validateInput, type InputProblem } from '../validate-input';
import { InputProblems } from './input-problems';

type Schema = Record<string, unknown>;

type FieldKind = 'string' | 'enum' | 'number' | 'integer' | 'boolean' | 'json';

interface Field {
  name: string;
  kind: FieldKind;
  required: boolean;
  options: unknown[];
  description: string | undefined;
  initial: string;
}

function fieldKind(schema: Schema): FieldKind {
  if (Array.isArray(schema['enum']) && schema['enum'].every((v) => typeof v === 'string')) return 'enum';
  switch (schema['type']) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    default:
      return 'json';
  }
}

function initialText(kind: FieldKind, schema: Schema): string {
  const fallback = schema['default'];
  if (fallback === undefined) return kind === 'boolean' ? 'false' : '';
  if (kind === 'json' || typeof fallback === 'object') return formatJson(fallback);
  return typeof fallback === 'string' ? fallback : JSON.stringify(fallback);
}

/** The fields of an object schema, or null when the schema is not one (the form is then JSON only). */
export function fieldsOf(schema: Schema | undefined): Field[] | null {
  if (!schema || schema['type'] !== 'object') return null;
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null) return null;
  const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
  return Object.entries(properties as Record<string, Schema>).map(([name, property]) => {
    const kind = fieldKind(property);
    return {
      name,
      kind,
      required: required.includes(name),
      options: kind === 'enum' ? (property['enum'] as unknown[]) : [],
      description: typeof property['description'] === 'string' ? property['description'] : undefined,
      initial: initialText(kind, property),
    };
  });
}

function valueOf(
  fields: Field[],
  texts: Record<string, string>,
): { value: Record<string, unknown>; problems: InputProblem[] } {
  const value: Record<string, unknown> = {};
  const problems: InputProblem[] = [];
  for (const field of fields) {
    const text = texts[field.name] ?? '';
    if (field.kind === 'boolean') {
      value[field.name] = text === 'true';
      continue;
    }
    if (text.trim() === '') continue; // left empty: not sent (the schema says whether it is required)
    if (field.kind === 'number' || field.kind === 'integer') {
      const number = Number(text);
      if (Number.isNaN(number)) problems.push({ path: `/${field.name}`, message: 'must be a number' });
      else value[field.name] = number;
    } else if (field.kind === 'json') {
      try {
        value[field.name] = JSON.parse(text);
      } catch {
        problems.push({ path: `/${field.name}`, message: 'is not valid JSON' });
      }
    } else {
      value[field.name] = text;
    }
  }
  return { value, problems };
}

export function SchemaForm({
  schema,
  submitLabel,
  onSubmit,
}: {
  schema: Schema | undefined;
  submitLabel: string;
  onSubmit: (input: Record<string, unknown>) => Promise<void>;
}) {
  const fields = useMemo(() => fieldsOf(schema), [schema]);
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries((fields ?? []).map((f) => [f.name, f.initial])),
  );
  const [asJson, setAsJson] = useState(fields === null);
  const [json, setJson] = useState('{}');
  const [problems, setProblems] = useState<InputProblem[]>([]);
  const [busy, setBusy] = useState(false);

  const switchToJson = (on: boolean) => {
    if (on && fields) setJson(formatJson(valueOf(fields, texts).value));
    setAsJson(on);
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setProblems([]);
    let input: unknown;
    if (asJson || !fields) {
      try {
        input = JSON.parse(json);
      } catch (caught) {
        setProblems([{ path: '/', message: `is not JSON: ${(caught as Error).message}` }]);
        return;
      }
    } else {
      const built = valueOf(fields, texts);
      if (built.problems.length > 0) {
        setProblems(built.problems);
        return;
      }
      input = built.value;
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      setProblems([{ path: '/', message: 'must be a JSON object' }]);
      return;
    }
    setBusy(true);
    try {
      const found = await validateInput(schema, input);
      if (found.length > 0) {
        setProblems(found);
        return;
      }
      await onSubmit(input as Record<string, unknown>);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="schema-form" noValidate onSubmit={(event) => void submit(event)}>
      {fields && (
        <div class="checkbox">
          <input
            id="input-as-json"
            type="checkbox"
            checked={asJson}
            onChange={(e) => switchToJson(e.currentTarget.checked)}
          />
          <label for="input-as-json">Edit the input as JSON</label>
        </div>
      )}
      {!asJson && fields && fields.length === 0 && <p class="hint">This workflow takes no input.</p>}
      {!asJson &&
        fields?.map((field) => {
          const id = `input-${field.name}`;
          const set = (text: string) => setTexts((current) => ({ ...current, [field.name]: text }));
          const label = (
            <>
              {field.name}
              {field.required && (
                <span class="required" aria-hidden="true">
                  {' '}
                  *
                </span>
              )}
              {field.kind === 'json' && <span class="hint"> (JSON)</span>}
            </>
          );
          const describedBy = field.description ? `${id}-help` : undefined;
          if (field.kind === 'boolean') {
            return (
              <div class="checkbox" key={field.name}>
                <input
                  id={id}
                  type="checkbox"
                  checked={texts[field.name] === 'true'}
                  onChange={(e) => set(String(e.currentTarget.checked))}
                  aria-describedby={describedBy}
                />
                <label for={id}>{label}</label>
                {field.description && (
                  <p id={describedBy} class="hint">
                    {field.description}
                  </p>
                )}
              </div>
            );
          }
          return (
            <div class="field" key={field.name}>
              <label for={id}>{label}</label>
              {field.kind === 'enum' ? (
                <select
                  id={id}
                  value={texts[field.name]}
                  onChange={(e) => set(e.currentTarget.value)}
                  aria-required={field.required}
                  aria-describedby={describedBy}
                >
                  <option value="">{field.required ? 'Choose…' : '(none)'}</option>
                  {field.options.map((option) => (
                    <option key={String(option)} value={String(option)}>
                      {String(option)}
                    </option>
                  ))}
                </select>
              ) : field.kind === 'json' ? (
                <textarea
                  id={id}
                  rows={3}
                  spellcheck={false}
                  value={texts[field.name]}
                  onInput={(e) => set(e.currentTarget.value)}
                  aria-required={field.required}
                  aria-describedby={describedBy}
                />
              ) : (
                <input
                  id={id}
                  type={field.kind === 'string' ? 'text' : 'number'}
                  step={field.kind === 'integer' ? 1 : 'any'}
                  value={texts[field.name]}
                  onInput={(e) => set(e.currentTarget.value)}
                  aria-required={field.required}
                  aria-describedby={describedBy}
                />
              )}
              {field.description && (
                <p id={describedBy} class="hint">
                  {field.description}
                </p>
              )}
            </div>
          );
        })}
      {asJson && (
        <div class="field">
          <label for="input-json">Input (JSON)</label>
          <textarea
            id="input-json"
            rows={8}
            spellcheck={false}
            value={json}
            onInput={(e) => setJson(e.currentTarget.value)}
          />
        </div>
      )}
      {fields && fields.some((f) => f.required) && !asJson && (
        <p class="hint">
          <span aria-hidden="true">*</span> required
        </p>
      )}
      <InputProblems problems={problems} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Starting…' : submitLabel}
        </button>
      </div>
    </form>
  );
}
