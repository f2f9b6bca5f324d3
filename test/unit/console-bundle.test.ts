/**
 * The console's budget (docs/console.md): what the browser loads first — index.html's scripts, module preloads
 * and stylesheets — is at most 250 KB gzipped. Reads the build `npm run build` wrote (dist/console).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { consoleDirectory } from '../../platform/paths';

const BUDGET_BYTES = 250 * 1024;

/** The files index.html makes the browser fetch before the console starts. */
export function firstLoadFiles(html: string): string[] {
  const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!);
  const links = [
    ...html.matchAll(/<link\b[^>]*\brel="(?:modulepreload|stylesheet)"[^>]*\bhref="([^"]+)"/g),
  ].map((m) => m[1]!);
  return [...scripts, ...links];
}

describe('console bundle', () => {
  it('loads at most 250 KB gzipped before the first page shows, and keeps the validator and diff out of it', () => {
    const indexFile = path.join(consoleDirectory, 'index.html');
    expect(fs.existsSync(indexFile), `${indexFile} is missing: run npm run build`).to.equal(true);
    const files = firstLoadFiles(fs.readFileSync(indexFile, 'utf8'));
    expect(files.some((file) => file.endsWith('.js'))).to.equal(true);
    let total = 0;
    const sizes: Record<string, number> = {};
    for (const file of files) {
      const body = fs.readFileSync(path.join(consoleDirectory, file));
      sizes[file] = zlib.gzipSync(body).length;
      total += sizes[file];
    }
    expect(total, `first load, gzipped: ${JSON.stringify(sizes)}`).to.be.at.most(BUDGET_BYTES);

    // Loaded on demand: the schema validator (retry editor, run form) and the version diff.
    const entry = files
      .filter((file) => file.endsWith('.js'))
      .map((file) => fs.readFileSync(path.join(consoleDirectory, file), 'utf8'))
      .join('\n');
    expect(entry).not.to.include('does not have required property');
    expect(entry).not.to.include('ignoreWhitespace');
    expect(entry).to.match(/import\(["'`][^"'`]+\.js["'`]\)/);
  });
});
