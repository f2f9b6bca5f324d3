/** The README is the newcomer's manual: it must document every setting the code reads. */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { CONFIG_VARIABLES } from '../../src/config';
import { projectRoot } from '../../src/paths';

describe('README', () => {
  const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');

  it('documents every configuration variable', () => {
    const missing = CONFIG_VARIABLES.filter((name) => !readme.includes(`\`${name}\``));
    expect(missing, `missing from the README's configuration table: ${missing.join(', ')}`).to.deep.equal([]);
  });

  it('gives the two commands: run the service, run the tests', () => {
    expect(readme).to.include('npm ci && npm start');
    expect(readme).to.include('npm ci && npm test');
  });

  it('names the command that .ci/run runs', () => {
    expect(fs.readFileSync(path.join(projectRoot, '.ci', 'run'), 'utf8')).to.include('npm ci && npm test');
  });
});
