/**
 * The code passes ESLint (strict TypeScript rules, determinism guards on workflow code) and Prettier, and the
 * OpenAPI document passes Redocly (redocly.yaml): the pieces of `npm run lint`.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { writeOpenApiDocument } from '../../scripts/openapi-document';

const run = promisify(execFile);
const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);

async function outputOf(command: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(bin(command), args, {
      cwd: projectRoot,
      maxBuffer: 32 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('code style', function () {
  this.timeout(180_000);

  it('passes ESLint', async () => {
    const { code, output } = await outputOf('eslint', ['.']);
    expect(code, output).to.equal(0);
  });

  it('passes Prettier', async () => {
    const { code, output } = await outputOf('prettier', ['--check', '.']);
    expect(code, output).to.equal(0);
  });

  it('has an OpenAPI document that passes Redocly', async () => {
    const file = writeOpenApiDocument(path.join(projectRoot, 'dist', 'openapi.lint-test.json'));
    const { code, output } = await outputOf('redocly', ['lint', file, '--config', 'redocly.yaml']);
    expect(code, output).to.equal(0);
  });
});
