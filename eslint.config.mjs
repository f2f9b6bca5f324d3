// Lint rules: strict TypeScript habits everywhere, and determinism guards for workflow code.
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import prettier from 'eslint-config-prettier/flat';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      '.tools/**',
      '.test-data/**',
      'eslint.config.mjs',
      'scripts/**/*.js',
      'clients/*/dist/**',
      // Written by `npm run client:generate` (openapi-typescript); a unit test keeps it in step.
      'clients/typescript/src/generated/**',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
      'import-x/ignore': ['node_modules'],
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'off',
      // Route handlers and cleanups are async by contract, whether or not they await.
      '@typescript-eslint/require-await': 'off',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Dependencies run one way, floor by floor (ARCHITECTURE.md): core ← platform ← {src (the API),
      // workers} ← processes. Each zone names the floors a folder must not import.
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: import.meta.dirname,
          zones: [
            {
              target: './core',
              from: ['./platform', './src', './workers', './processes', './test', './bench', './scripts'],
              message: 'core/ is the ground floor (pure: no I/O): it imports nothing of ours.',
            },
            {
              target: './platform',
              from: ['./src', './workers', './processes', './test', './bench', './scripts'],
              message:
                'platform/ builds on core/ only: the API and the worker share it, so it imports neither.',
            },
            {
              target: './src',
              from: ['./workers', './processes'],
              message:
                'The API (src/) builds on platform/ and core/: it never imports the worker, and only processes/ starts both.',
            },
            {
              target: './workers',
              from: ['./src', './processes'],
              message:
                'The worker builds on platform/ and core/: it never imports the API, and only processes/ starts both.',
            },
            {
              target: './workers/workflows',
              from: ['./platform', './workers/worker.ts', './workers/run-moves.ts', './workers/telemetry.ts'],
              message: 'Workflow code imports core/ and @temporalio/workflow only (and types of activities).',
            },
            {
              target: './console',
              from: [
                './core',
                './platform',
                './src',
                './workers',
                './processes',
                './test',
                './bench',
                './scripts',
              ],
              message:
                'The console talks to the service over HTTP only: @switchyard/client and its own code.',
            },
          ],
        },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, and nothing from the
    // API process except types.
    files: ['workers/workflows/**/*.ts', 'core/**/*.ts', 'bench/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code must stay deterministic: no Node built-ins.',
          })),
          patterns: [
            {
              group: [
                '**/src/**',
                '**/platform/**',
                '**/processes/**',
                '**/activities/**',
                '@temporalio/client',
                '@temporalio/worker',
                '@temporalio/activity',
              ],
              allowTypeImports: true,
              message: 'Workflow code may import only types from the API, activities or client packages.',
            },
          ],
        },
      ],
    },
  },
  {
    // The console runs in browsers: no Node built-ins (console/tsconfig.json has the DOM library only).
    files: ['console/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'The console runs in browsers.' })),
          patterns: [
            {
              regex: '^@switchyard/client(?!/browser$)',
              message: 'Import @switchyard/client/browser: the main entry needs Node.',
            },
          ],
        },
      ],
    },
  },
  {
    // Vite's configuration runs in Node, type-checked by its own project.
    files: ['console/vite.config.mts'],
    languageOptions: {
      parserOptions: { projectService: false, project: './console/tsconfig.node.json' },
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Response bodies (supertest) are untyped JSON; assertions check their shape.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  prettier,
);
