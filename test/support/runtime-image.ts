/**
 * The Dockerfile's runtime stage reproduced in a folder of this machine, for tests that run the production
 * image without a Docker engine. Each COPY of the stage is done from what stands for its source here: the
 * build context is the checkout, the stage that runs `npm run build` is the built checkout (dist/), and
 * the stage that runs `npm ci --omit=dev` is the lockfile's production packages (linked from the
 * checkout's node_modules). Every other instruction (RUN, USER) is left out; ENV is returned for the
 * processes to start with.
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../platform/paths';
import { cmdOf, copiesOf, envOf, runsOf, workdirOf, type CopiedPath, type Stage } from './dockerfile';

export interface RuntimeImage {
  /** The folder that stands for the image's WORKDIR. */
  root: string;
  /** The variables the stage's ENV instructions set. */
  env: Record<string, string>;
  /** The stage's CMD. */
  cmd: string[];
}

const BUILDS = /\bnpm run build\b/;
const INSTALLS_PRODUCTION_DEPENDENCIES = /\bnpm ci\b.*--omit[= ]dev/;

/** Reproduces `runtime` (a stage of `stages`) in `root`, an empty folder. */
export function reproduceRuntimeStage(stages: Stage[], runtime: Stage, root: string): RuntimeImage {
  const workdir = workdirOf(runtime);
  for (const copy of copiesOf(runtime)) {
    const target = path.posix.relative(workdir, copy.target);
    if (target.startsWith('..') || path.posix.isAbsolute(target))
      throw new Error(
        `${copyLine(copy)} copies outside the WORKDIR ${workdir}: no folder here stands for that`,
      );
    const destination = path.join(root, target);
    fs.mkdirSync(path.dirname(destination), { recursive: true });
    const source = sourceOf(copy, stages);
    if ('productionDependencies' in source) linkProductionPackages(destination);
    else fs.cpSync(source.path, destination, { recursive: true });
  }
  return { root, env: envOf(runtime), cmd: cmdOf(runtime) };
}

function copyLine(copy: CopiedPath): string {
  return `COPY ${copy.from ? `--from=${copy.from} ` : ''}${copy.source}`;
}

/** What stands for a COPY's source on this machine: a path of the checkout, or the production packages. */
type Source = { path: string } | { productionDependencies: true };

function sourceOf(copy: CopiedPath, stages: Stage[]): Source {
  const checkoutPath = (relative: string) => {
    const file = path.join(projectRoot, relative);
    if (!fs.existsSync(file))
      throw new Error(`${copyLine(copy)}: ${relative} is not in the checkout (has \`npm run build\` run?)`);
    return { path: file };
  };
  if (copy.from === undefined) return checkoutPath(copy.source);
  const stage = stages.find((candidate) => candidate.name === copy.from);
  if (!stage) throw new Error(`${copyLine(copy)}: the Dockerfile has no stage named ${copy.from}`);
  const relative = path.posix.relative(workdirOf(stage), copy.source);
  if (relative.startsWith('..') || path.posix.isAbsolute(relative))
    throw new Error(`${copyLine(copy)}: outside the WORKDIR of stage ${copy.from}`);
  const runs = runsOf(stage);
  if (runs.some((run) => BUILDS.test(run))) return checkoutPath(relative);
  if (runs.some((run) => INSTALLS_PRODUCTION_DEPENDENCIES.test(run)) && relative === 'node_modules')
    return { productionDependencies: true };
  throw new Error(`${copyLine(copy)}: no folder here stands for what stage ${copy.from} makes`);
}

interface LockfileEntry {
  dev?: boolean;
  link?: boolean;
}

/**
 * The packages `npm ci --omit=dev` installs at the top of node_modules, as links into the checkout's
 * node_modules: the lockfile's top-level entries that are not development-only. Links to workspaces are
 * left out: the production-dependencies stage has the client workspace's package.json only, so its link
 * leads nowhere in the image. Optional packages for other platforms are not installed here, nor there.
 */
function linkProductionPackages(destination: string): void {
  const lockfile = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockfileEntry>;
  };
  for (const [key, entry] of Object.entries(lockfile.packages)) {
    const name = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key)?.[1];
    if (!name || entry.dev || entry.link) continue;
    const installed = path.join(projectRoot, key);
    if (!fs.existsSync(installed)) continue;
    const linked = path.join(destination, name);
    fs.mkdirSync(path.dirname(linked), { recursive: true });
    fs.symlinkSync(installed, linked, 'dir');
  }
}
