/**
 * One commit is one build (docs/operations.md#deploys-worker-builds-and-versioning): the default build id
 * is a hash of the workflow bundle, so it must not depend on the folder the bundle was built in. Built in
 * two folders, the bundles differ (their source maps name the folders) and their build id does not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { bundleBuildId } from '../../platform/temporal/worker-deployment';
import { bundleWorkflows } from '../../workers/workflow-bundle';

const DIST = path.resolve(__dirname, '../..');
const ROOT = path.resolve(DIST, '..');

/** The compiled workflow code (and the core it imports) copied under `folder`, bundled as `npm run build` does. */
async function bundleIn(folder: string): Promise<string> {
  for (const part of ['core', 'workers']) {
    fs.cpSync(path.join(DIST, part), path.join(folder, 'dist', part), { recursive: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(folder, 'node_modules'));
  return bundleWorkflows(path.join(folder, 'dist'));
}

describe('worker build ids', function () {
  this.timeout(180_000);
  const folders: string[] = [];
  after(() => {
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  });

  it('are the same for the same code bundled in two folders', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'sy-build-id-'));
    folders.push(base);
    const first = await bundleIn(path.join(base, 'a'));
    const second = await bundleIn(path.join(base, 'checkout-in-another', 'place'));
    expect(first, 'the bundles name their folders (in the source map)').to.not.equal(second);
    expect(bundleBuildId({ code: first })).to.equal(bundleBuildId({ code: second }));
  });

  it('differ when the code that runs differs', () => {
    const code = fs.readFileSync(path.join(DIST, 'workflow-bundle.js'), 'utf8');
    expect(bundleBuildId({ code: code.replace('use strict', 'use  strict') })).to.not.equal(
      bundleBuildId({ code }),
    );
  });
});
