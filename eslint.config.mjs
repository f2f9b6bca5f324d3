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
      // Dependencies run one way (docs/development.md#code-layout): API and worker build on core/.
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: import.meta.dirname,
          zones: [
            {
              target: './core',
              from: ['./src', './workers', './test', './bench', './scripts'],
              message: 'core/ is what the API and the worker build on: it imports neither.',
            },
            {
              target: './workers/workflows',
              from: ['./src', './workers/worker.ts', './workers/main.ts'],
              message: 'Workflow code imports core/ and @temporalio/workflow only (and types of activities).',
            },
            {
              target: './workers/activities',
              from: './src',
              except: ['./store', './net', './secrets', './webhooks', './observability', './compute'],
              message:
                'Activities use only the platform parts of src/: the database through src/store, the network through src/net, threads through src/compute.',
            },
            {
              target: './console',
              from: ['./src', './workers', './core', './test', './bench', './scripts'],
              message:
                'The console talks to the service over HTTP only: @switchyard/client and its own code.',
            },
            {
              // The all-in-one runtime starts the worker beside the API, and the operator's move-runs
              // command replays histories on the worker's code (src/cli/move-runs.ts); nothing else may.
              target: './src/**/!(runtime|move-runs).ts',
              from: './workers',
              message: 'The API does not import worker internals.',
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
