/** Locations inside the installed project, independent of whether code runs from src (tsx) or dist. */
import fs from 'node:fs';
import path from 'node:path';

function findProjectRoot(start: string): string {
  let dir = start;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot(__dirname);
export const migrationsDirectory = path.join(projectRoot, 'migrations');
/** Tools the service installs for itself (the Temporal CLI), kept out of the user's PATH. */
export const toolsDirectory = path.join(projectRoot, '.tools');
/**
 * The workflow bundle `npm run build` writes beside the compiled code (dist/workflow-bundle.js); the
 * worker bundles on the fly when it is missing, e.g. when code is compiled into another folder.
 */
export const workflowBundlePath = path.join(__dirname, '..', 'workflow-bundle.js');

/** The workspace console `npm run build` writes beside the compiled code (dist/console; src/console/static.ts). */
export const consoleDirectory = path.join(__dirname, '..', 'console');

/** Redoc's standalone bundle, copied here by `npm run build` (scripts/copy-api-reference.ts; src/http/api-reference.ts). */
export const apiReferenceBundlePath = path.join(__dirname, '..', 'api-reference', 'redoc.standalone.js');

/** The version in package.json (shown in the OpenAPI document and logs). */
export const projectVersion = (
  JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }
).version;
