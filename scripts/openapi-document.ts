/**
 * `npm run openapi:write [-- FILE]`: writes the OpenAPI document of this build (default dist/openapi.json),
 * read in-process exactly as GET /v1/openapi.json serves it (no database, no Temporal), for tools that
 * read a file: `npm run lint` runs Redocly on it (redocly.yaml).
 */
import fs from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '../src/app';
import { projectRoot } from '../platform/paths';

export const OPENAPI_FILE = path.join(projectRoot, 'dist/openapi.json');

export function writeOpenApiDocument(file: string = OPENAPI_FILE): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
  return file;
}

if (require.main === module) {
  const file = writeOpenApiDocument(process.argv[2] ? path.resolve(process.argv[2]) : OPENAPI_FILE);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), file)}\n`);
}
