/**
 * The docs stay true to the code: the README is a short front page that keeps the two commands; every
 * setting the service reads is documented, and every variable the docs name as a setting is read by
 * something; every `npm run` script and `switchyard` command the docs show exists; every relative link
 * and anchor resolves, in the docs and in code comments that cite them; the examples parse (shell, Python)
 * and type-check (TypeScript). The tutorial itself runs in test/integration/tutorial.test.ts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import { CONFIG_VARIABLES } from '../../platform/config';
import { projectRoot } from '../../platform/paths';
import { TEMPORAL_ENVCONFIG_VARIABLES } from '../../platform/temporal/connection';
import {
  codeSpans,
  fencedBlocks,
  headingAnchors,
  markdownLinks,
  type FencedBlock,
} from '../support/markdown';

/** The front page must read in five minutes. */
const README_BUDGET_BYTES = 8 * 1024;
const TWO_COMMANDS = ['npm ci && npm start', 'npm ci && npm test'];

const read = (file: string): string => fs.readFileSync(path.join(projectRoot, file), 'utf8');

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  const root = path.join(projectRoot, dir);
  if (!fs.existsSync(root)) return [];
  if (fs.statSync(root).isFile()) return keep(dir) ? [dir] : [];
  return fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(dir, name))
    .filter(
      (file) =>
        !file.split(path.sep).includes('node_modules') && fs.statSync(path.join(projectRoot, file)).isFile(),
    )
    .filter(keep)
    .sort();
}

/** Every Markdown document of the project a reader meets. */
const DOCUMENTS = [
  'README.md',
  'ARCHITECTURE.md',
  'CHANGELOG.md',
  ...filesUnder('docs', (file) => file.endsWith('.md')),
  'clients/typescript/README.md',
  'examples/README.md',
  'test/replay/README.md',
];

/** Where code comments live: they cite docs pages, which must exist. */
const CODE = [
  'src',
  'platform',
  'processes',
  'core',
  'workers',
  'clients/typescript/src',
  'scripts',
  'test',
  'bench',
  'migrations',
  'console',
  'eslint.config.mjs',
  'docker-compose.yml',
  'Dockerfile',
  '.ci/run',
].flatMap((dir) => filesUnder(dir, (file) => /\.(ts|js|mjs|sql|yml|html|css)$|Dockerfile$|run$/.test(file)));

/** This file, whose patterns name what they look for. */
const SELF = path.join('test', 'unit', 'docs.test.ts');

const SHELL = new Set(['sh', 'bash', 'shell', 'console', '']);

function blocksOf(file: string): FencedBlock[] {
  return fencedBlocks(read(file));
}

/** Each line of shell code in the docs (continuations joined), with where it is. */
function shellCommands(): { file: string; line: number; text: string }[] {
  const commands: { file: string; line: number; text: string }[] = [];
  for (const file of DOCUMENTS) {
    for (const block of blocksOf(file).filter((b) => SHELL.has(b.lang))) {
      const joined = block.code.replace(/\\\n\s*/g, ' ').split('\n');
      joined.forEach((text, index) => {
        const command = text.replace(/(^|\s)#.*$/, '').trim();
        if (command) commands.push({ file, line: block.line + 1 + index, text: command });
      });
    }
    for (const span of codeSpans(read(file))) commands.push({ file, line: span.line, text: span.text });
  }
  return commands;
}

describe('docs', () => {
  describe('the README, the front page', () => {
    const readme = read('README.md');

    it('gives the two commands, verbatim: run the service, run the tests', () => {
      for (const command of TWO_COMMANDS) expect(readme).to.include(command);
    });

    it('names the command that .ci/run runs', () => {
      expect(read('.ci/run')).to.include('npm ci && npm test');
    });

    it(`reads in five minutes: at most ${README_BUDGET_BYTES} bytes (the rest belongs in docs/)`, () => {
      expect(Buffer.byteLength(readme)).to.be.at.most(README_BUDGET_BYTES);
    });

    it('links the docs index, the API reference served at /docs, and the license', () => {
      const targets = markdownLinks(readme).map((link) => link.target.split('#')[0]);
      expect(targets).to.include.members(['docs/README.md', 'docs/tutorial.md', 'LICENSE']);
      expect(readme).to.include('http://localhost:3000/docs');
    });
  });

  it('the docs index (docs/README.md) links every page of docs/', () => {
    const targets = markdownLinks(read('docs/README.md')).map((link) => link.target.split('#')[0]);
    const pages = filesUnder(
      'docs',
      (file) => file.endsWith('.md') && file !== path.join('docs', 'README.md'),
    );
    const missing = pages.filter(
      (page) => !targets.includes(path.relative('docs', page).split(path.sep).join('/')),
    );
    expect(missing, 'docs pages the index does not link').to.deep.equal([]);
  });

  describe('configuration', () => {
    const page = read('docs/configuration.md');

    it('documents every variable the service reads in docs/configuration.md', () => {
      const missing = [...CONFIG_VARIABLES, ...TEMPORAL_ENVCONFIG_VARIABLES].filter(
        (name) => !page.includes(`\`${name}\``),
      );
      expect(missing, 'missing from docs/configuration.md').to.deep.equal([]);
    });

    /**
     * Variables the docs may name that are not the service's configuration, each with why, and the files
     * that read them (the name must occur there, so the docs cannot name one that nothing reads).
     */
    const OTHERS: { names: RegExp; why: string; readIn: string[] }[] = [
      {
        names: /^(SERVICE_NODE_OPTIONS|MALLOC_ARENA_MAX)$/,
        why: 'read by `npm start` for the service process it runs',
        readIn: ['processes/main.ts'],
      },
      {
        names: /^(SWITCHYARD_URL|SWITCHYARD_API_KEY|XDG_CONFIG_HOME)$/,
        why: 'the CLI',
        readIn: ['clients/typescript/src/cli'],
      },
      { names: /^TEST_[A-Z0-9_]+$/, why: 'the test suites', readIn: ['test/support'] },
      {
        names: /^(UPDATE_SCREENSHOTS|FUZZ_[A-Z0-9_]+)$/,
        why: 'the screenshot test and the Schemathesis fuzz test',
        readIn: ['test/integration'],
      },
      {
        names: /^(SY_FUZZ_[A-Z0-9_]+|SCHEMATHESIS_HOOKS)$/,
        why: 'the Schemathesis hooks (a run against npm start)',
        readIn: ['test/support/schemathesis'],
      },
      { names: /^LOAD_[A-Z0-9_]+$/, why: 'the load suite', readIn: ['test/load'] },
      {
        names: /^OTEL_[A-Z0-9_]+$/,
        why: "OpenTelemetry's standard variables, read by its SDK",
        readIn: ['platform/observability/tracing.ts'],
      },
      { names: /^BENCH_[A-Z0-9_]+$/, why: 'the benchmark', readIn: ['bench'] },
      { names: /^FAKE_AI_PORT$/, why: '`npm run fake-ai`', readIn: ['scripts/fake-ai-provider.ts'] },
      { names: /^NODE_OPTIONS$/, why: "Node's own", readIn: [] },
      { names: /^AUTO_UPGRADE$/, why: 'a Temporal versioning behaviour, not a variable', readIn: [] },
      {
        names: /^TEMPORAL_CODEC_[A-Z_]+$/,
        why: "Temporal UI server's codec settings",
        readIn: ['docker-compose.yml'],
      },
      {
        names: /^(HOOK_SECRET|WH_SECRET|RECEIVER_PORT|SWITCHYARD_WEBHOOK_SECRET)$/,
        why: 'shell and environment variables of the examples themselves',
        readIn: ['docs/tutorial.md', 'docs/webhooks.md'],
      },
    ];
    const known = new Set<string>([...CONFIG_VARIABLES, ...TEMPORAL_ENVCONFIG_VARIABLES]);

    /** `NAME` in code spans, and `NAME=value` prefixes of shell commands: what the docs present as settings. */
    function namedSettings(): { name: string; where: string }[] {
      const found: { name: string; where: string }[] = [];
      for (const file of DOCUMENTS) {
        for (const span of codeSpans(read(file))) {
          for (const [name] of span.text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:_\*)?/g)) {
            found.push({ name, where: `${file}:${span.line}` });
          }
        }
        for (const block of blocksOf(file).filter((b) => SHELL.has(b.lang))) {
          block.code.split('\n').forEach((line, index) => {
            const prefix = /^\s*((?:[A-Z][A-Z0-9_]*=\S*\s+)+)(?:npm|npx|node|docker|bash)\b/.exec(line);
            for (const [, name] of prefix?.[1]?.matchAll(/([A-Z][A-Z0-9_]*)=/g) ?? []) {
              found.push({ name: name!, where: `${file}:${block.line + 1 + index}` });
            }
          });
        }
      }
      return found;
    }

    it('names as settings only variables that something reads', () => {
      const readers = new Map<string, string>();
      const readBy = (file: string) => {
        if (!readers.has(file)) {
          readers.set(
            file,
            filesUnder(file, () => true)
              .map(read)
              .join('\n'),
          );
        }
        return readers.get(file)!;
      };
      const unknown = namedSettings().filter(({ name }) => {
        const wildcard = name.endsWith('_*');
        const stem = wildcard ? name.slice(0, -1) : name;
        if (wildcard ? [...known].some((k) => k.startsWith(stem)) : known.has(name)) return false;
        const other = OTHERS.find((o) => o.names.test(wildcard ? `${stem}X` : name));
        if (!other) return true;
        return other.readIn.length > 0 && !other.readIn.some((file) => readBy(file).includes(stem));
      });
      expect(
        unknown.map(({ name, where }) => `${name} (${where})`),
        'variables the docs name that neither platform/config.ts nor a known reader reads',
      ).to.deep.equal([]);
    });
  });

  describe('commands', () => {
    it('shows only npm scripts that package.json has', () => {
      const scripts = new Set(
        ['package.json', 'clients/typescript/package.json'].flatMap((file) =>
          Object.keys((JSON.parse(read(file)) as { scripts: Record<string, string> }).scripts),
        ),
      );
      const missing: string[] = [];
      for (const { file, line, text } of shellCommands()) {
        for (const match of text.matchAll(/\bnpm (?:run(?:\s+--silent)?\s+([a-z][\w:-]*)|(start|test)\b)/g)) {
          const script = match[1] ?? match[2]!;
          if (!scripts.has(script)) missing.push(`npm run ${script} (${file}:${line})`);
        }
      }
      expect(missing, 'npm scripts that do not exist').to.deep.equal([]);
    });

    it('shows only switchyard commands and options that the CLI has', () => {
      const cli = spawnSync(
        process.execPath,
        [path.join(projectRoot, 'clients/typescript/dist/cli/main.js'), '--help'],
        {
          encoding: 'utf8',
        },
      );
      expect(cli.status, cli.stderr).to.equal(0);
      const commandsPart = cli.stdout.split('Commands:')[1]!.split('\n\n')[0]!;
      const commands = new Set<string>();
      for (const line of commandsPart.split('\n')) {
        const words = /^ {2}([a-z]+)(?: ([a-z]+)\b)?/.exec(line);
        if (words) commands.add(words[2] ? `${words[1]} ${words[2]}` : words[1]!);
      }
      const groups = new Set([...commands].filter((c) => c.includes(' ')).map((c) => c.split(' ')[0]!));
      const options = new Set([...cli.stdout.matchAll(/(?<![\w-])(--?[a-z][a-z-]*)/g)].map((m) => m[1]!));

      const wrong: string[] = [];
      let checked = 0;
      for (const { file, line, text } of shellCommands()) {
        const invocation =
          /(?:^|[;&|]\s*|\bnpx\s+)switchyard\s+(.*)$/.exec(text) ??
          /\bnpm run(?:\s+--silent)? cli(?:\s+--silent)? --\s+(.*)$/.exec(text);
        if (!invocation) continue;
        const words = invocation[1]!.split(/\s+/);
        if (words[0] === '...' || words[0] === '--help' || words[0] === '-h') continue;
        checked += 1;
        const command = groups.has(words[0]!) ? `${words[0]} ${words[1]}` : words[0]!;
        if (!commands.has(command)) wrong.push(`switchyard ${command} (${file}:${line})`);
        for (const option of words.filter((w) => /^--?[a-z]/.test(w)).map((w) => w.split('=')[0]!)) {
          if (!options.has(option)) wrong.push(`switchyard ${command} ${option} (${file}:${line})`);
        }
      }
      expect(wrong, 'commands or options the CLI does not have').to.deep.equal([]);
      expect(checked, 'switchyard commands found in the docs').to.be.greaterThan(10);
    });
  });

  describe('links', () => {
    const anchorsOf = new Map<string, Set<string>>();
    const anchors = (file: string) => {
      if (!anchorsOf.has(file)) anchorsOf.set(file, headingAnchors(fs.readFileSync(file, 'utf8')));
      return anchorsOf.get(file)!;
    };

    /** A link target (relative to `from`'s folder) that does not resolve, and why; undefined when it does. */
    function broken(from: string, target: string): string | undefined {
      const [file = '', anchor] = target.split('#');
      const resolved = file === '' ? from : path.resolve(path.dirname(from), decodeURIComponent(file));
      if (!fs.existsSync(resolved)) return 'no such file';
      if (anchor === undefined) return undefined;
      if (!resolved.endsWith('.md')) return 'an anchor into a file that is not Markdown';
      return anchors(resolved).has(anchor) ? undefined : `no heading with the anchor #${anchor}`;
    }

    it('resolves every relative link and anchor of the docs', () => {
      const wrong: string[] = [];
      for (const file of DOCUMENTS) {
        for (const link of markdownLinks(read(file))) {
          if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // http:, https:, mailto:
          const why = broken(path.join(projectRoot, file), link.target);
          if (why) wrong.push(`${file}:${link.line} → ${link.target}: ${why}`);
        }
      }
      expect(wrong, 'broken links').to.deep.equal([]);
    });

    it('resolves every docs page and anchor that code comments cite', () => {
      const wrong: string[] = [];
      let cited = 0;
      for (const file of CODE) {
        for (const [target] of read(file).matchAll(/\bdocs\/[\w./-]+\.md(?:#[\w-]+)?/g)) {
          cited += 1;
          const why = broken(path.join(projectRoot, 'README.md'), target);
          if (why) wrong.push(`${file} → ${target}: ${why}`);
        }
      }
      expect(wrong, 'broken citations').to.deep.equal([]);
      expect(cited, 'citations of docs pages in code').to.be.greaterThan(20);
    });

    it('cites the public docs in code, not the internal contract or README sections', () => {
      const internal = new RegExp(`CONTRACT ${'§'}|\\(README, |README\\.md, [A-Z"]|README's [A-Z]`);
      // Migrations keep their text: postgrator refuses to start when an applied migration's checksum changes.
      const offenders = CODE.filter(
        (file) => !file.startsWith('migrations') && file !== SELF && internal.test(read(file)),
      );
      expect(offenders, 'files that cite CONTRACT.md or README sections').to.deep.equal([]);
    });
  });

  describe('examples', () => {
    it('the tutorial is one bash script that parses', () => {
      const script = blocksOf('docs/tutorial.md')
        .filter((block) => block.lang === 'bash')
        .map((block) => block.code)
        .join('\n');
      const check = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
      expect(check.status, check.stderr).to.equal(0);
    });

    it('every Python example parses', function () {
      const blocks = DOCUMENTS.flatMap((file) =>
        blocksOf(file)
          .filter((block) => block.lang === 'python')
          .map((block) => ({ ...block, file })),
      );
      expect(blocks).to.have.length.greaterThan(0);
      const python = spawnSync('python3', ['--version']);
      if (python.status !== 0) this.skip();
      for (const block of blocks) {
        const check = spawnSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], {
          input: block.code,
          encoding: 'utf8',
        });
        expect(check.status, `${block.file}:${block.line}: ${check.stderr}`).to.equal(0);
      }
    });

    it('every TypeScript example in docs/ type-checks against the built client', () => {
      const examples = filesUnder('docs', (file) => file.endsWith('.md')).flatMap((file) =>
        blocksOf(file)
          .filter((block) => block.lang === 'ts' || block.lang === 'typescript')
          .map((block, index) => ({
            name: path.join(projectRoot, 'docs', `.example-${path.basename(file, '.md')}-${index}.ts`),
            where: `${file}:${block.line}`,
            code: block.code,
          })),
      );
      expect(examples).to.have.length.greaterThan(0);
      const options: ts.CompilerOptions = {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
        types: ['node'],
        strict: true,
        noUncheckedIndexedAccess: true,
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
      };
      const host = ts.createCompilerHost(options);
      const virtual = new Map(examples.map((example) => [example.name, example.code]));
      const real = ts.createCompilerHost(options);
      host.fileExists = (name) => virtual.has(name) || real.fileExists(name);
      host.readFile = (name) => virtual.get(name) ?? real.readFile(name);
      host.getSourceFile = (name, version, onError) =>
        virtual.has(name)
          ? ts.createSourceFile(name, virtual.get(name)!, version)
          : real.getSourceFile(name, version, onError);
      const program = ts.createProgram([...virtual.keys()], options, host);
      const problems = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file && virtual.has(d.file.fileName))
        .map((d) => {
          const example = examples.find((e) => e.name === d.file!.fileName)!;
          const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
          return `${example.where} (+${line + 1}): ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
        });
      expect(problems, 'TypeScript examples that do not compile').to.deep.equal([]);
    });
  });
});
