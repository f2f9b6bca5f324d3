/**
 * The TypeScript client's generated types are the OpenAPI document's: the committed
 * clients/typescript/src/generated/schema.d.ts must be exactly what `npm run client:generate` writes now.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../platform/paths';
import { CLIENT_GENERATE_COMMAND, CLIENT_SCHEMA_FILE, renderClientSchema } from '../../scripts/client-schema';

describe('TypeScript client generated code', function () {
  this.timeout(60_000);

  it('is in step with the OpenAPI document', async () => {
    const expected = await renderClientSchema();
    const file = path.relative(projectRoot, CLIENT_SCHEMA_FILE);
    const committed = fs.existsSync(CLIENT_SCHEMA_FILE) ? fs.readFileSync(CLIENT_SCHEMA_FILE, 'utf8') : '';
    if (committed === expected) return;
    const [have, want] = [committed.split('\n'), expected.split('\n')];
    const line = want.findIndex((text, i) => have[i] !== text);
    const at = line < 0 ? have.length : line;
    expect.fail(
      `${file} differs from what the OpenAPI document generates (first at line ${at + 1}: ` +
        `committed ${JSON.stringify(have[at] ?? '<end of file>')}, expected ${JSON.stringify(want[at] ?? '<end of file>')}). ` +
        `Run \`${CLIENT_GENERATE_COMMAND}\` and commit the file.`,
    );
  });
});
