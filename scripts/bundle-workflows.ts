/** `npm run build` step: bundles the workflow code once, so workers start without webpack. */
import fs from 'node:fs';
import path from 'node:path';
import { workflowBundlePath } from '../platform/paths';
import { bundleWorkflows } from '../workers/workflow-bundle';

async function main(): Promise<void> {
  const started = Date.now();
  const code = await bundleWorkflows(path.resolve(__dirname, '..'));
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
