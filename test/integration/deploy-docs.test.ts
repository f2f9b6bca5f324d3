/**
 * docs/operations.md's deploy rehearsal, run as printed: the `bash` blocks of "Rehearsal: a rolling deploy
 * on one machine" run in order in one non-interactive bash session (`set -Eeuo pipefail`), with the
 * variables the rehearsal lets a reader set at its top: OLD and NEW are two release folders this test
 * prepares from this checkout's build, NEW's workflow bundle being the incompatible next build
 * (test/support/next-build/workflows.ts: a timer before the steps); DATABASE_URL names a database on the
 * test PostgreSQL server that the rehearsal creates and drops; the Temporal CLI is the one the tests use;
 * ports are free ones. The rehearsal checks its own results (`check`, `wait_until`); afterwards this test
 * reads the logs it leaves.
 *
 * The script keeps the document's line numbers (each block's code on the lines it has in the document), so
 * a failure names the line of docs/operations.md that failed.
 *
 * The other commands of the deploys section are checked where running them would need a cluster: the
 * Temporal CLI commands that would ask for confirmation carry `--yes`, and the hand-started dev servers
 * get the dynamic config that `npm start`'s dev server has (platform/temporal/dev-server.ts).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { expect } from 'chai';
import pg from 'pg';
import { randomBase62 } from '../../platform/ids';
import { projectRoot } from '../../platform/paths';
import { ensureTemporalCli } from '../../platform/temporal/cli';
import { devServerArgs } from '../../platform/temporal/dev-server';
import { runBash, type BashResult } from '../support/bash-script';
import { fencedBlocks, markdownSection, type FencedBlock } from '../support/markdown';
import { freePort } from '../support/ports';
import { tempDir, TEST_DATABASE_URL, testLogger } from '../support/stack';

const DOC = 'docs/operations.md';
const DEPLOYS = 'deploys-worker-builds-and-versioning';
const REHEARSAL = 'rehearsal-a-rolling-deploy-on-one-machine';
const SHELL = new Set(['sh', 'bash']);

/** The fenced blocks of the document's section under the heading with `anchor`. */
function sectionBlocks(anchor: string): FencedBlock[] {
  const markdown = fs.readFileSync(path.join(projectRoot, DOC), 'utf8');
  const { start, end } = markdownSection(markdown, anchor);
  return fencedBlocks(markdown).filter((block) => block.line > start && block.line < end);
}

/**
 * The script bash runs: the blocks in order, each block's code on the line it has in the document, so that
 * bash's $LINENO is the document's line. The trap names the line of the command that failed at the top
 * level (a helper's call), and the helper's own line when it failed inside one.
 */
function script(blocks: FencedBlock[]): string {
  const lines = [
    'set -Eeuo pipefail; ' +
      `trap 'at=$LINENO; depth=\${#BASH_LINENO[@]}; helper=""; ` +
      `if ((depth > 1)); then at=\${BASH_LINENO[depth - 2]}; helper=" (in the helper at line $LINENO)"; fi; ` +
      `echo "deploy-docs: a command failed at ${DOC}:$at$helper" >&2' ERR`,
  ];
  for (const block of blocks) {
    if (block.line < lines.length) throw new Error(`${DOC}:${block.line}: blocks out of order`);
    while (lines.length < block.line) lines.push('');
    lines.push(...block.code.split('\n'));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A release folder as `npm ci && npm run build` leaves it, for what the rehearsal runs (`node dist/...`,
 * `npm run admin`): this checkout's build (dist, copied: the code finds its project root from where it
 * is), package.json, the script `npm run admin` starts with, the migrations, and node_modules (linked).
 */
function prepareRelease(dir: string): void {
  fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  fs.cpSync(path.join(projectRoot, 'dist'), path.join(dir, 'dist'), { recursive: true });
  fs.cpSync(path.join(projectRoot, 'migrations'), path.join(dir, 'migrations'), { recursive: true });
  for (const file of ['package.json', 'scripts/ensure-built.js'])
    fs.copyFileSync(path.join(projectRoot, file), path.join(dir, file));
  fs.symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'));
}

/** Replaces a release's workflow bundle with the next build's workflow code, bundled as `npm run build` does. */
async function makeNextBuild(dir: string): Promise<void> {
  const dist = path.join(dir, 'dist');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(dist, 'test', 'support', 'next-build', 'workflows.js'),
    workflowInterceptorModules: [path.join(dist, 'workers', 'workflows', 'interceptors.js')],
    logger: new DefaultLogger('WARN'),
    webpackConfigHook: (config) => ({
      ...config,
      context: dir,
      resolve: { ...config.resolve, symlinks: false },
    }),
  });
  fs.writeFileSync(path.join(dist, 'workflow-bundle.js'), code);
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The shell commands of blocks, continuation lines joined, comments dropped. */
function commands(blocks: FencedBlock[]): { text: string; line: number }[] {
  return blocks
    .filter((block) => SHELL.has(block.lang))
    .flatMap((block) => {
      const out: { text: string; line: number }[] = [];
      let line = block.line + 1;
      for (const text of block.code.replace(/\\\n/g, ' \u0000').split('\n')) {
        const command = text
          .replace(/\u0000/g, '')
          .replace(/(^|\s)#.*$/, '')
          .trim();
        if (command) out.push({ text: command, line });
        line += 1 + (text.match(/\u0000/g)?.length ?? 0);
      }
      return out;
    });
}

/** The dynamic config values `npm start`'s dev server gets, besides a test's own. */
const DEV_SERVER_DYNAMIC_CONFIG = (() => {
  const args = devServerArgs({ dataDir: '/x', ip: '127.0.0.1', port: 1, uiPort: 0, namespace: 'default' });
  return args.filter((_, index) => args[index - 1] === '--dynamic-config-value');
})();

describe('the deploy docs, run as printed @integration', function () {
  this.timeout(300_000);
  const deploys = sectionBlocks(DEPLOYS);
  const rehearsal = sectionBlocks(REHEARSAL).filter((block) => block.lang === 'bash');
  let workDir: string;
  let work: string;
  let database: string;
  let result: BashResult;

  describe('the commands of the deploys section', () => {
    const all = commands(deploys);

    it('confirm with --yes wherever the Temporal CLI would ask', () => {
      const asking = all.filter(
        ({ text }) =>
          /\btemporal worker deployment (set-current-version|set-ramping-version)\b/.test(text) ||
          /\btemporal workflow update-options\b.*(--query|-q)\b/.test(text),
      );
      expect(asking.length, 'commands that would ask').to.be.greaterThan(2);
      const without = asking.filter(({ text }) => !/(^|\s)(--yes|-y)(\s|$)/.test(text));
      expect(without.map(({ line, text }) => `${DOC}:${line}: ${text}`)).to.deep.equal([]);
    });

    it('leave --yes out of update-options for one workflow id (the CLI refuses it there)', () => {
      const single = all.filter(({ text }) =>
        /\btemporal workflow update-options\b.*--workflow-id\b/.test(text),
      );
      expect(single.length).to.be.greaterThan(0);
      const withYes = single.filter(({ text }) => /(^|\s)(--yes|-y)(\s|$)/.test(text));
      expect(withYes.map(({ line, text }) => `${DOC}:${line}: ${text}`)).to.deep.equal([]);
    });

    it('start a dev server by hand with the dynamic config that npm start`s has', () => {
      const starts = all.filter(({ text }) => /\bserver start-dev\b/.test(text));
      expect(starts.length, 'hand-started dev servers').to.be.greaterThan(1);
      for (const { text, line } of starts) {
        const values = [...text.matchAll(/--dynamic-config-value\s+'?([^\s']+)/g)].map((m) => m[1]!);
        expect(values, `${DOC}:${line}`).to.include.members(DEV_SERVER_DYNAMIC_CONFIG);
      }
    });
  });

  it('names the document line where a rehearsal command fails', () => {
    const dir = tempDir('sy-deploy-docs-line-');
    try {
      const file = path.join(dir, 'fails.sh');
      const code = 'fails() { false; }\ntrue\nfails';
      fs.writeFileSync(file, script([{ lang: 'bash', code, line: 10, marker: undefined }]));
      const run = spawnSync('bash', [file], { encoding: 'utf8' });
      expect(run.status).to.not.equal(0);
      expect(run.stderr).to.include(`a command failed at ${DOC}:13 (in the helper at line 11)`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the rehearsal', () => {
    before(async () => {
      workDir = tempDir('sy-deploy-docs-');
      const oldRelease = path.join(workDir, 'releases', 'old');
      const newRelease = path.join(workDir, 'releases', 'new');
      prepareRelease(oldRelease);
      prepareRelease(newRelease);
      await makeNextBuild(newRelease);
      work = path.join(workDir, 'rehearsal');
      database = `sy_rehearsal_${randomBase62(10).toLowerCase()}`;
      const databaseUrl = new URL(TEST_DATABASE_URL);
      databaseUrl.pathname = `/${database}`;

      const scriptFile = path.join(workDir, 'rehearsal.sh');
      fs.writeFileSync(scriptFile, script(rehearsal));
      // A reader's shell: no settings of the test run, only what the rehearsal asks for.
      const env: NodeJS.ProcessEnv = {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'] ?? workDir,
        LANG: 'C.UTF-8',
        OLD: oldRelease,
        NEW: newRelease,
        WORK: work,
        DATABASE_URL: databaseUrl.toString(),
        TEMPORAL_DEV_PORT: String(await freePort()),
        PORT: String(await freePort()),
        TEMPORAL_CLI_PATH: await ensureTemporalCli(process.env['TEMPORAL_CLI_PATH'], testLogger),
      };
      const began = Date.now();
      result = await runBash(scriptFile, workDir, env, 240_000);
      // TEST_LOG_LEVEL=debug shows what the reader would see.
      testLogger.debug(
        { ms: Date.now() - began, code: result.code, output: result.output },
        'The rehearsal ran',
      );
    });

    after(async () => {
      if (database) await adminQuery(`drop database if exists ${database} with (force)`);
      if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
    });

    it('is there: several bash blocks', () => {
      expect(rehearsal.length).to.be.greaterThan(3);
    });

    it('runs every bash block, in order, without a failure', () => {
      expect(result.code, `the rehearsal failed:\n${result.output.slice(-8000)}`).to.equal(0);
    });

    describe('leaves what it says it does', () => {
      before(function () {
        if (result.code !== 0) this.skip();
      });
      const log = (name: string) => fs.readFileSync(path.join(work, `${name}.log`), 'utf8');

      it('the new build became current, and left the runs that do not replay on their build', () => {
        expect(log('worker-new')).to.match(
          /Worker build is now the current version \(new runs go to it instead of build /,
        );
        expect(log('worker-new')).to.include(
          'Left runs on their builds: their histories do not replay on this build',
        );
      });

      it('the old worker, restarted, stayed as it was and said why', () => {
        const lines = log('worker-old').split('\n');
        expect(
          lines.filter((line) => line.includes('"msg":"Worker build is now the current version"')),
        ).to.have.length(1);
        expect(
          lines.some((line) => line.includes('Worker build stays as it is and takes no new runs')),
        ).to.equal(true);
      });

      it('the dry run moved nothing and kept the run that does not replay, saying why', () => {
        const report = fs.readFileSync(path.join(work, 'move-runs.txt'), 'utf8');
        expect(report).to.match(/dry run: add --yes to move/);
        expect(report).to.match(
          /^kept +ex_\S+ on build \S+: does not replay on \S+: .*(Nondeterminism|DeterminismViolation)/m,
        );
        expect(report).to.not.match(/^moved/m);
      });

      it('stopped what it started and dropped its database', async () => {
        const left = fs.readdirSync(work).filter((name) => name.endsWith('.pid'));
        expect(left, 'pid files of processes not stopped').to.deep.equal([]);
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
          expect(rowCount, 'the rehearsal database').to.equal(0);
        } finally {
          await client.end();
        }
      });
    });
  });
});
