/** `npm run build` step: bundles the workflow code once, so workers start without webpack. */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { workflowBundlePath } from '../src/paths';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../workers/telemetry';

async function main(): Promise<void> {
  const started = Date.now();
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workers/workflows'),
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: new DefaultLogger('WARN'),
  });
  fs.mkdirSync(path.dirname(workflowBundlePath), { recursive: true });
  fs.writeFileSync(workflowBundlePath, code);
  process.stdout.write(
    `Workflow bundle: ${path.relative(process.cwd(), workflowBundlePath)} (${(code.length / 1024).toFixed(0)} KiB, ${Date.now() - started} ms)\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
