/**
 * `switchyard workflows apply -f FILE|DIR`: workflow definitions as code. Each JSON or YAML file holds one
 * definition; a workflow that does not exist is created, one whose definition differs from the latest
 * version gets a new version (after the diff is shown), and an identical one is left alone.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { parse as parseYaml } from 'yaml';
import type { SwitchyardClient, Workflow, WorkflowDefinition } from '../client';
import { SwitchyardError } from '../errors';

export const DEFINITION_EXTENSIONS = ['.json', '.yaml', '.yml'];

export type ApplyResult = 'created' | 'updated' | 'unchanged';

export interface ApplyOutcome {
  file: string;
  id: string;
  result: ApplyResult;
  /** The version now latest (the new one when created or updated). */
  version: number;
  /** Unified diff of the latest stored definition and the file, when they differ. */
  diff?: string;
}

/** A file that cannot be read as a definition (exit code 2, nothing is applied). */
export class DefinitionFileError extends Error {
  override readonly name = 'DefinitionFileError';
}

/** The definition files of a path: the file itself, or a folder's JSON/YAML files (recursively, sorted). */
export function definitionFiles(path: string): string[] {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    throw new DefinitionFileError(`${path}: no such file or directory`);
  }
  if (!stats.isDirectory()) return [path];
  const files: string[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) files.push(...definitionFiles(full));
    else if (DEFINITION_EXTENSIONS.includes(extname(entry.name).toLowerCase())) files.push(full);
  }
  return files;
}

export function readDefinition(file: string): WorkflowDefinition {
  let parsed: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    parsed = extname(file).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new DefinitionFileError(`${file}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DefinitionFileError(`${file}: a workflow definition must be an object`);
  }
  const id = (parsed as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '') {
    throw new DefinitionFileError(`${file}: the definition has no "id"`);
  }
  return parsed as WorkflowDefinition;
}

/** Fields the service adds to a stored definition. */
const SERVICE_FIELDS = [
  'version',
  'latest_version',
  'versions',
  'created_at',
  'updated_at',
  'version_created_at',
  'hook_secret',
];

/**
 * A definition as compared: without the service's fields, with the default trigger, without null or
 * undefined members, keys sorted (the service may store them in another order).
 */
export function normalizeDefinition(definition: WorkflowDefinition | Workflow): unknown {
  const copy: Record<string, unknown> = { ...definition };
  for (const field of SERVICE_FIELDS) delete copy[field];
  copy['trigger'] ??= { type: 'api' };
  return canonical(copy);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== null && member !== undefined) sorted[key] = canonical(member);
  }
  return sorted;
}

/** The unified diff between two definitions (empty when they are the same). */
export function definitionDiff(
  id: string,
  stored: WorkflowDefinition | Workflow,
  wanted: WorkflowDefinition,
  storedVersion: number,
): string {
  const before = `${JSON.stringify(normalizeDefinition(stored), null, 2)}\n`;
  const after = `${JSON.stringify(normalizeDefinition(wanted), null, 2)}\n`;
  if (before === after) return '';
  return createTwoFilesPatch(`${id} (version ${storedVersion})`, `${id} (file)`, before, after, '', '', {
    context: 3,
  })
    .split('\n')
    .slice(1) // the "====" line
    .join('\n');
}

/** Applies one definition: create, update (with its diff), or nothing. */
export async function applyDefinition(
  client: SwitchyardClient,
  file: string,
  definition: WorkflowDefinition,
  options: { dryRun?: boolean; onDiff?: (outcome: ApplyOutcome) => void } = {},
): Promise<ApplyOutcome> {
  let stored: Workflow | undefined;
  try {
    stored = await client.workflows.get(definition.id);
  } catch (error) {
    if (!(error instanceof SwitchyardError && error.code === 'workflow_not_found')) throw error;
  }
  if (!stored) {
    const version = options.dryRun ? 1 : (await client.workflows.create(definition)).version;
    return { file, id: definition.id, result: 'created', version };
  }
  const diff = definitionDiff(definition.id, stored, definition, stored.version);
  if (diff === '') return { file, id: definition.id, result: 'unchanged', version: stored.version };
  options.onDiff?.({ file, id: definition.id, result: 'updated', version: stored.version + 1, diff });
  const version = options.dryRun
    ? stored.version + 1
    : (await client.workflows.update(definition.id, definition)).version;
  return { file, id: definition.id, result: 'updated', version, diff };
}
