/**
 * The npm packages compiled code requires: its `require("…")` calls (tsc's output for imports, dynamic
 * ones included), followed from the entry files through relative requires. Requires of computed names
 * are not seen.
 */
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';

const REQUIRE = /\brequire\(\s*(['"])([^'"]+)\1\s*\)/g;

/** The package a bare specifier names: `@scope/name/deep/file` → `@scope/name`, `name/file` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** Each package the module graph of `entries` (.js files) requires, with the files that require it. */
export function requiredPackages(entries: string[]): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  const seen = new Set<string>();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file) || !file.endsWith('.js')) continue;
    seen.add(file);
    for (const [, , specifier = ''] of fs.readFileSync(file, 'utf8').matchAll(REQUIRE)) {
      if (isBuiltin(specifier)) continue;
      if (specifier.startsWith('.') || path.isAbsolute(specifier)) {
        pending.push(require.resolve(specifier, { paths: [path.dirname(file)] }));
        continue;
      }
      const name = packageOf(specifier);
      packages.set(name, [...(packages.get(name) ?? []), file]);
    }
  }
  return packages;
}
