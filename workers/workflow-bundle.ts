/**
 * Bundling the workflow code (`npm run build`: scripts/bundle-workflows.ts), so workers start without
 * webpack. Module ids are paths relative to the compiled tree's parent (webpack's `context`), never
 * absolute nor relative to the working directory of the build: the default build id hashes the bundle
 * (platform/temporal/worker-deployment.ts), and one commit must be one build wherever it is built.
 */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

/** The bundle of the workflows compiled under `distDir` (the `dist` folder of a build). */
export async function bundleWorkflows(distDir: string): Promise<string> {
  const workflows = path.join(distDir, 'workers', 'workflows');
  const workflowsPath = path.join(workflows, 'index.js');
  const interceptorsPath = path.join(workflows, 'interceptors.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: [interceptorsPath],
    // Our workflow modules are evaluated once per workflow thread, not once per run: the SDK keeps
    // preloaded modules in the thread's shared module cache and deep-freezes what they export. What they
    // keep in module scope unexported is shared by every run of the thread, so workflow code keeps none
    // (test/unit/workflow-bundle.test.ts). Without this every run evaluated all of them again in its own
    // cache (docs/benchmarks.md#our-workflow-modules-loaded-once-per-thread). OpenTelemetry's modules stay
    // per run: only traced runs load them (interceptors.ts).
    preloadModules: [workflowsPath, interceptorsPath],
    logger: new DefaultLogger('WARN'),
    // Paths as seen from the build's folder, also through a linked node_modules (its real location
    // would put another folder's name into the module ids).
    webpackConfigHook: (config) => ({
      ...config,
      context: path.dirname(distDir),
      resolve: { ...config.resolve, symlinks: false },
    }),
  });
  return code;
}
