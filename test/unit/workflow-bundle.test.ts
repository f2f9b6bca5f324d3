/**
 * Our workflow modules are loaded once per workflow thread (workers/workflow-bundle.ts: the bundler's
 * `preloadModules`), not once per run. The SDK keeps them in the thread's shared module cache and
 * deep-freezes what they export; what they keep in module scope without exporting it is shared by every
 * run of the thread and frozen by nothing. So workflow code must hold no module-level state.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import { workflowBundlePath } from '../../platform/paths';

const ROOT = path.resolve(__dirname, '../../..');

/** Our modules in the bundle, by webpack id ("./dist/workers/workflows/index.js"). */
function ourModuleIds(): string[] {
  const code = fs.readFileSync(workflowBundlePath, 'utf8');
  return [...new Set([...code.matchAll(/^\/\*\*\*\/ "(\.\/dist\/[^"]+\.js)"/gm)].map((match) => match[1]!))];
}

/**
 * Loads the bundle as the SDK's worker does (its reusable context, in a child process: the SDK installs
 * a promise hook in the thread that loads a bundle) and reports, before any run exists, which of the
 * given modules sit in the shared cache and whether their exports are frozen.
 */
function sharedModules(ids: string[]): Record<string, { shared: boolean; frozen: boolean }> {
  const script = `
    const fs = require('node:fs');
    const { parseWorkflowCode } = require('@temporalio/worker/lib/worker');
    const { ReusableVMWorkflowCreator } = require('@temporalio/worker/lib/workflow/reusable-vm');
    const [file, ids] = [process.argv[1], JSON.parse(process.argv[2])];
    (async () => {
      const creator = await ReusableVMWorkflowCreator.create(
        parseWorkflowCode(fs.readFileSync(file, 'utf8'), file), 5000, new Set());
      const cache = creator.context.__webpack_module_cache__;
      const report = {};
      for (const id of ids) {
        const module = cache[id];
        report[id] = { shared: module !== undefined, frozen: module !== undefined && Object.isFrozen(module.exports) };
      }
      process.stdout.write(JSON.stringify(report));
      process.exit(0);
    })().catch((error) => { process.stderr.write(String(error.stack)); process.exit(1); });
  `;
  const out = execFileSync(process.execPath, ['-e', script, workflowBundlePath, JSON.stringify(ids)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as Record<string, { shared: boolean; frozen: boolean }>;
}

/** Module-level declarations of a source file that hold state a run could change. */
function moduleState(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const where = (node: ts.Node) =>
    `${path.relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    if (!(list.flags & ts.NodeFlags.Const)) {
      found.push(`${where(statement)}: a module-level let or var`);
      continue;
    }
    for (const declaration of list.declarations) {
      const init = declaration.initializer;
      const readonlyType = declaration.type?.getText(source).startsWith('Readonly') ?? false;
      if (init && ts.isNewExpression(init) && !readonlyType) {
        const made = init.expression.getText(source);
        if (['Map', 'Set', 'WeakMap', 'WeakSet', 'Array'].includes(made))
          found.push(
            `${where(declaration)}: a module-level ${made}${made === 'Map' || made === 'Set' ? ` (type it Readonly${made} if nothing changes it)` : ''}`,
          );
      }
    }
  }
  return found;
}

describe('the workflow bundle', () => {
  it('loads our workflow modules once per workflow thread, their exports frozen', function () {
    this.timeout(60_000);
    const ids = ourModuleIds();
    expect(ids, 'our modules found in the bundle').to.include.members([
      './dist/workers/workflows/index.js',
      './dist/workers/workflows/interceptors.js',
    ]);
    const report = sharedModules(ids);
    const notShared = ids.filter((id) => !report[id]?.shared);
    expect(notShared, 'modules a run would evaluate again (not preloaded)').to.deep.equal([]);
    const notFrozen = ids.filter((id) => !report[id]?.frozen);
    expect(notFrozen, 'preloaded modules whose exports a run could change').to.deep.equal([]);
  });

  it('holds no module-level state in workflow code, which every run of a thread would share', () => {
    const sources = ourModuleIds().map((id) =>
      path.join(ROOT, id.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')),
    );
    expect(sources.length).to.be.greaterThan(10);
    const state = sources.flatMap(moduleState);
    expect(state, 'module-level state in workflow code').to.deep.equal([]);
  });

  it('finds module-level state where it is (the check itself)', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sy-wf-state-')), 'state.ts');
    fs.writeFileSync(
      file,
      [
        'let count = 0;',
        'const seen = new Set<string>();',
        'const KINDS: ReadonlySet<string> = new Set(["a"]);',
        'export const LIMIT = 10;',
        'export function f() { let local = 1; return local + count + seen.size + KINDS.size; }',
      ].join('\n'),
    );
    const state = moduleState(file);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    expect(state).to.have.length(2);
    expect(state[0]).to.match(/:1: a module-level let or var$/);
    expect(state[1]).to.match(/:2: a module-level Set/);
  });
});
