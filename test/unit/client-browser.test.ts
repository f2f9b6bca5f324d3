/**
 * @switchyard/client/browser, the entry the console bundles: nothing in its import graph needs Node, and
 * its idempotency keys are UUIDs even where a page has no crypto.randomUUID (plain HTTP, not localhost).
 */
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SwitchyardApiClient } from '@switchyard/client';
import { projectRoot } from '../../platform/paths';

const CLIENT_DIST = path.join(projectRoot, 'clients', 'typescript', 'dist');

/** Every module the compiled file requires, relative ones followed. */
function requiresOf(file: string, seen = new Set<string>()): Set<string> {
  for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(/require\("([^"]+)"\)/g)) {
    if (!specifier!.startsWith('.')) {
      seen.add(specifier!);
      continue;
    }
    const target = path.resolve(path.dirname(file), `${specifier}.js`);
    if (seen.has(target)) continue;
    seen.add(target);
    requiresOf(target, seen);
  }
  return seen;
}

describe('client in browsers', () => {
  it('the browser entry reaches no Node built-in, and neither hook signing nor webhook verification', () => {
    const modules = [...requiresOf(path.join(CLIENT_DIST, 'browser.js'))];
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    expect(modules.filter((m) => builtins.has(m))).to.deep.equal([]);
    const local = modules.filter((m) => m.startsWith(CLIENT_DIST)).map((m) => path.relative(CLIENT_DIST, m));
    expect(local).to.include('api-client.js');
    expect(local).not.to.include('hooks.js');
    expect(local).not.to.include('webhooks.js');
    expect(modules.filter((m) => !m.startsWith(CLIENT_DIST))).to.deep.equal(['openapi-fetch']);
  });

  it('sends a UUID v4 Idempotency-Key where crypto.randomUUID is missing', async () => {
    const sent: string[] = [];
    const client = new SwitchyardApiClient({
      baseUrl: 'http://service.test',
      fetch: async (request) => {
        sent.push(request.headers.get('idempotency-key') ?? '');
        return Response.json({ status: 'accepted', execution_id: 'ex_1' }, { status: 202 });
      },
    });
    Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      await client.workflows.trigger('wf', {});
      await client.workflows.trigger('wf', {});
    } finally {
      delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
    }
    await client.workflows.trigger('wf', {});
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const key of sent) expect(key).to.match(uuid);
    expect(new Set(sent).size).to.equal(3);
    expect(typeof globalThis.crypto.randomUUID).to.equal('function');
  });
});
