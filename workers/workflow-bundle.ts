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
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(workflows, 'index.js'),
    workflowInterceptorModules: [path.join(workflows, 'interceptors.js')],
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
