/**
 * The floors of the code (core ← platform ← {src, workers} ← processes; docs/development.md#code-layout) are
 * enforced by lint: eslint.config.mjs's `import-x/no-restricted-paths` reports an import from a floor above,
 * and lets an entry point in processes/ import both the API and the worker.
 *
 * Each probe is linted as text under a path in the real folders (ESLint's lintText with filePath), so the
 * configuration for that path applies, and no file is written where `eslint .` (npm run lint,
 * test/unit/lint.test.ts) could meet it. The probes are linted without type information: TypeScript's
 * project service knows only files on disk, and the rule under test reads import paths only.
 */
import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';
import { projectRoot } from '../../platform/paths';

const RULE = 'import-x/no-restricted-paths';

interface Probe {
  /** Where the probe stands, relative to the project. */
  file: string;
  /** Each imports a module that exists, so that the rule sees where it leads. */
  code: string;
}

const UPWARD: Record<string, Probe> = {
  'platform/ importing src/': {
    file: 'platform/layout-probe.ts',
    code: "export type { Services } from '../src/services';\n",
  },
  'core/ importing platform/': {
    file: 'core/layout-probe.ts',
    code: "export { loadConfig } from '../platform/config';\n",
  },
  'src/ importing workers/': {
    file: 'src/layout-probe.ts',
    code: "export { loadWorkflowBundle } from '../workers/worker';\n",
  },
  'workers/ importing src/': {
    file: 'workers/layout-probe.ts',
    code: "export { createApp } from '../src/app';\n",
  },
  'workflow code (workers/workflows/) importing platform/': {
    file: 'workers/workflows/layout-probe.ts',
    code: "export { loadConfig } from '../../platform/config';\n",
  },
};

const ALLOWED: Record<string, Probe> = {
  'processes/ importing src/ and workers/': {
    file: 'processes/layout-probe.ts',
    code: "export { createApp } from '../src/app';\nexport { loadWorkflowBundle } from '../workers/worker';\n",
  },
};

describe('the floors, enforced by lint', function () {
  this.timeout(60_000);
  const messages = new Map<string, ESLint.LintResult['messages']>();

  before(async () => {
    const eslint = new ESLint({
      cwd: projectRoot,
      ruleFilter: ({ ruleId }) => ruleId === RULE,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
    });
    for (const probe of [...Object.values(UPWARD), ...Object.values(ALLOWED)]) {
      const [result] = await eslint.lintText(probe.code, { filePath: path.join(projectRoot, probe.file) });
      messages.set(probe.file, result!.messages);
    }
  });

  const reportsOf = (probe: Probe) => {
    const found = messages.get(probe.file)!;
    const unexpected = found.filter((message) => message.ruleId !== RULE);
    expect(unexpected, `${probe.file}: ${JSON.stringify(unexpected)}`).to.deep.equal([]);
    return found;
  };

  for (const [what, probe] of Object.entries(UPWARD)) {
    it(`reports ${what}`, () => {
      expect(reportsOf(probe), `no ${RULE} report for ${probe.file}: ${probe.code}`).to.have.length(1);
    });
  }

  for (const [what, probe] of Object.entries(ALLOWED)) {
    it(`allows ${what}`, () => {
      expect(reportsOf(probe), `${RULE} reports ${probe.file}: ${probe.code}`).to.deep.equal([]);
    });
  }
});
