/**
 * examples/ stays what examples/README.md says: every file is listed there with a sample, saves as a
 * definition under its file's name, and calls only workflows of examples/. The runs themselves are in
 * test/integration/examples.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { definitionChecks } from '../support/definitions';
import { examples, sampleOf, EXAMPLES_README } from '../support/examples';
import { fencedBlocks, markdownLinks } from '../support/markdown';

const { parseDefinition } = definitionChecks();

/** Every step of a definition, nested ones included. */
function allSteps(steps: unknown): Record<string, unknown>[] {
  if (!Array.isArray(steps)) return [];
  return (steps as Record<string, unknown>[]).flatMap((step) => [
    step,
    ...allSteps(step['steps']),
    ...allSteps(step['default']),
    ...[
      ...((step['branches'] as { steps: unknown }[]) ?? []),
      ...((step['cases'] as { steps: unknown }[]) ?? []),
    ].flatMap((run) => allSteps(run.steps)),
  ]);
}

describe('examples/', () => {
  it('holds examples', () => {
    expect(examples().map((example) => example.name)).to.include.members([
      'fan-out-enrichment',
      'batch-notification',
      'polling-with-sub-workflow',
    ]);
  });

  it('every JSON file is listed in examples/README.md', () => {
    const readme = fs.readFileSync(EXAMPLES_README, 'utf8');
    const linked = new Set(markdownLinks(readme).map((link) => link.target));
    const unlisted = examples().filter((example) => !linked.has(example.file));
    expect(
      unlisted.map((example) => example.file),
      'files of examples/ without a link in its README',
    ).to.deep.equal([]);
  });

  it('every example has a sample in the README: its input, its answers and its result', () => {
    const without = examples().filter((example) => sampleOf(example.name) === undefined);
    expect(
      without.map((example) => example.name),
      'examples without blocks marked "example: <name> input|answers|result"',
    ).to.deep.equal([]);
  });

  for (const { name, file, definition } of examples()) {
    it(`${file} saves as a definition whose id is its file's name`, async () => {
      await parseDefinition(definition).catch((error: { details?: unknown }) =>
        expect.fail(`${file}: ${JSON.stringify(error.details)}`),
      );
      expect(definition['id']).to.equal(name);
    });
  }

  it('a workflow step calls a workflow of examples/', () => {
    const names = examples().map((example) => example.name);
    const called = examples().flatMap(({ definition }) =>
      allSteps(definition['steps'])
        .filter((step) => step['kind'] === 'workflow')
        .map((step) => step['workflow']),
    );
    expect(called, 'workflows called by workflow steps').to.not.be.empty;
    for (const workflow of called) expect(names, `the workflow "${String(workflow)}"`).to.include(workflow);
  });

  it("the definition docs/definitions.md walks through is the example's file", () => {
    const page = fs.readFileSync(path.join(projectRoot, 'docs/definitions.md'), 'utf8');
    const shown = fencedBlocks(page).filter((block) => block.marker?.startsWith('example file: '));
    expect(shown, 'blocks marked "example file: examples/<file>" in docs/definitions.md').to.not.be.empty;
    for (const block of shown) {
      const file = block.marker!.slice('example file: '.length).split(' ')[0]!;
      expect(JSON.parse(block.code), `docs/definitions.md line ${block.line} against ${file}`).to.deep.equal(
        JSON.parse(fs.readFileSync(path.join(projectRoot, file), 'utf8')),
      );
    }
  });
});
