/**
 * The Dockerfile read as data (no Docker engine needed): its stages, and what each stage's instructions
 * copy, run, set and start. test/unit/docker-compose.test.ts checks it; test/integration/production-image.test.ts
 * reproduces its runtime stage in a folder.
 */
import path from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/** Stages and instructions: comments dropped, continuation lines joined. */
export function parseDockerfile(text: string): Stage[] {
  const logicalLines: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    const continued = /\\\s*$/.test(line);
    pending += `${continued ? line.replace(/\\\s*$/, '') : line} `;
    if (!continued) {
      if (pending.trim()) logicalLines.push(pending.trim());
      pending = '';
    }
  }
  const stages: Stage[] = [];
  for (const line of logicalLines) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') {
      stages.push({ name: /\s+AS\s+(\S+)\s*$/i.exec(args)?.[1], instructions: [] });
    } else if (stages.length > 0) {
      stages[stages.length - 1]!.instructions.push(instruction);
    }
  }
  return stages;
}

export interface CopiedPath {
  /** The stage copied from; undefined for the build context. */
  from: string | undefined;
  source: string;
  target: string;
}

/** What each COPY of a stage puts where, with relative targets resolved against WORKDIR. */
export function copiesOf(stage: Stage): CopiedPath[] {
  const copies: CopiedPath[] = [];
  let workdir = '/';
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, args.trim());
    if (keyword !== 'COPY' && keyword !== 'ADD') continue;
    const tokens = args.split(/\s+/).filter(Boolean);
    const from = tokens.find((token) => token.startsWith('--from='))?.slice('--from='.length);
    const operands = tokens.filter((token) => !token.startsWith('--'));
    const destination = path.posix.resolve(workdir, operands[operands.length - 1]!);
    const sources = operands.slice(0, -1);
    const intoDirectory = sources.length > 1 || operands[operands.length - 1]!.endsWith('/');
    for (const source of sources) {
      const normalized = source.startsWith('/')
        ? path.posix.normalize(source)
        : path.posix.normalize(source).replace(/\/$/, '');
      copies.push({
        from,
        source: normalized,
        target: intoDirectory ? path.posix.join(destination, path.posix.basename(normalized)) : destination,
      });
    }
  }
  return copies;
}

export function workdirOf(stage: Stage): string {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'WORKDIR')
    .reduce((dir, instruction) => path.posix.resolve(dir, instruction.args.trim()), '/');
}

export function runsOf(stage: Stage): string[] {
  return stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
}

/** The variables a stage's ENV instructions set (`ENV NAME=value ...`, or the older `ENV NAME value`). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter((i) => i.keyword === 'ENV')) {
    if (!/^\S+=/.test(args)) {
      const [, name = '', value = ''] = /^(\S+)\s+(.*)$/.exec(args) ?? [];
      env[name] = value;
      continue;
    }
    for (const [, name = '', quoted, bare] of args.matchAll(/(\S+?)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/g))
      env[name] = quoted?.replace(/\\(.)/g, '$1') ?? bare ?? '';
  }
  return env;
}

/** Whether `copy` puts `sourcePath` (a path in its source: build context or stage) at `targetPath`. */
export function places(copy: CopiedPath, sourcePath: string, targetPath: string): boolean {
  const relative = path.posix.relative(copy.source, sourcePath);
  if (relative.startsWith('..') || path.posix.isAbsolute(relative)) return false;
  return path.posix.join(copy.target, relative) === targetPath;
}

export function cmdOf(stage: Stage): string[] {
  const cmd = stage.instructions.filter((i) => i.keyword === 'CMD').pop();
  if (!cmd) return [];
  return cmd.args.startsWith('[') ? (JSON.parse(cmd.args) as string[]) : ['/bin/sh', '-c', cmd.args];
}
