/**
 * The definitions of examples/ and the samples examples/README.md documents for them: the sample input,
 * what the sample's services answer, and the status and output the run ends with. A stand-in for those
 * services answers on a local receiver.
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../platform/paths';
import { fencedBlocks } from './markdown';
import type { ReceivedRequest, Reply } from './receiver';

export const EXAMPLES_DIR = path.join(projectRoot, 'examples');
export const EXAMPLES_README = path.join(EXAMPLES_DIR, 'README.md');

/** `{"status": 200, "body": ...}`, or several given in turn (the last one again after that). */
export type SampleAnswer = Pick<Reply, 'status' | 'body'> | Pick<Reply, 'status' | 'body'>[];

export interface Example {
  /** The file's name without `.json`: the workflow id too. */
  name: string;
  file: string;
  definition: Record<string, unknown>;
}

export interface Sample {
  input: Record<string, unknown>;
  /** `"<METHOD> <URL>"` (`*` for one segment of the path) → the answer. */
  answers: Record<string, SampleAnswer>;
  result: { status: string; output: unknown };
}

/** Every JSON file of examples/, in name order. */
export function examples(): Example[] {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      name: file.slice(0, -'.json'.length),
      file,
      definition: JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) as Record<
        string,
        unknown
      >,
    }));
}

/** The blocks of the README marked `<!-- example: <name> input|answers|result -->`; undefined when one lacks. */
export function sampleOf(name: string): Sample | undefined {
  const blocks = fencedBlocks(fs.readFileSync(EXAMPLES_README, 'utf8'));
  const part = (which: string): unknown => {
    const found = blocks.filter((block) => block.marker === `example: ${name} ${which}`);
    if (found.length > 1) throw new Error(`${found.length} blocks marked "example: ${name} ${which}"`);
    return found[0] ? JSON.parse(found[0].code) : undefined;
  };
  const [input, answers, result] = [part('input'), part('answers'), part('result')];
  if (input === undefined || answers === undefined || result === undefined) return undefined;
  return { input, answers, result } as Sample;
}

/**
 * The sample input with each `*_url` field pointed at `base`: `https://crm.example.com/api` becomes
 * `<base>/crm.example.com/api`, which `standIn` maps back.
 */
export function pointedAt(input: Record<string, unknown>, base: string): Record<string, unknown> {
  const pointed = structuredClone(input);
  for (const [field, value] of Object.entries(pointed)) {
    if (!field.endsWith('_url') || typeof value !== 'string') continue;
    const url = new URL(value);
    pointed[field] = `${base}/${url.host}${url.pathname.replace(/\/$/, '')}`;
  }
  return pointed;
}

/**
 * A receiver's responder giving the sample's answers to the requests of a run whose URLs `pointedAt`
 * moved to it; a request the sample does not answer gets 404. `asked` counts the requests per answer key.
 */
export function standIn(answers: Record<string, SampleAnswer>): {
  respond: (request: ReceivedRequest) => Reply;
  asked: Map<string, number>;
} {
  const asked = new Map<string, number>();
  const keys = Object.keys(answers);
  const matches = (key: string, request: string) => {
    const pattern = key.split('*').map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(`^${pattern.join('[^/]+')}$`).test(request);
  };
  const respond = (request: ReceivedRequest): Reply => {
    const [host, ...rest] = request.path.slice(1).split('/');
    const asRequested = `${request.method} https://${host}/${rest.join('/')}`;
    // An exact key first, then the patterns.
    const key =
      keys.find((k) => k === asRequested) ?? keys.find((k) => k.includes('*') && matches(k, asRequested));
    if (!key) return { status: 404, body: { error: `the sample does not answer ${asRequested}` } };
    const count = asked.get(key) ?? 0;
    asked.set(key, count + 1);
    const answer = answers[key]!;
    return Array.isArray(answer) ? answer[Math.min(count, answer.length - 1)]! : answer;
  };
  return { respond, asked };
}
