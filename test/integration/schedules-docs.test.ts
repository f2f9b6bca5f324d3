/**
 * The worked example of docs/definitions.md#schedules runs as printed, in bash with the tutorial's helpers
 * (`json`, `wait_for`), against a real service: every command succeeds, and the backfill counts what the
 * page says.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { runWithTutorialHelpers } from '../support/bash-script';
import { fencedBlocks } from '../support/markdown';
import { scheduleSuite } from '../support/schedules';
import type { ApiClient, TestService } from '../support/stack';

const PAGE = 'docs/definitions.md';

function blocksOf(file: string) {
  return fencedBlocks(fs.readFileSync(path.join(projectRoot, file), 'utf8'));
}

describe('docs: the schedules example @integration', function () {
  this.timeout(120_000);
  let service: TestService;
  let api: ApiClient;
  let workspaceId: string;

  scheduleSuite({}, (suite) => ({ service, api, workspaceId } = suite));

  it('runs as printed: the window of Monday to Friday backfills 5 runs', async () => {
    const example = blocksOf(PAGE).filter((block) => block.marker === 'schedules example');
    expect(example, `one block marked "schedules example" in ${PAGE}`).to.have.length(1);
    const key = await service.newKey(workspaceId, ['write']);
    const result = await runWithTutorialHelpers(example[0]!.code, { url: service.url, key });
    expect(result.code, result.output).to.equal(0);
    expect(result.output).to.include('"count":5');
    expect(result.output).to.include('"note":"warehouse migration"');
    const schedule = await api.get('/v1/workflows/weekday-report/schedule').expect(200);
    expect(schedule.body).to.include({ paused: false, timezone: 'Europe/Paris', overlap: 'skip' });
  });
});
