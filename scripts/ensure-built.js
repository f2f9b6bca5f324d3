// Builds the project when dist/ is missing, so `npm run admin` works on a fresh clone too.
const { existsSync } = require('node:fs');
const { execSync } = require('node:child_process');
const path = require('node:path');

if (!existsSync(path.join(__dirname, '..', 'dist', 'processes', 'admin.js'))) {
  process.stderr.write('Building the project first (npm run build)...\n');
  execSync('npm run build --silent', {
    stdio: ['ignore', 'ignore', 'inherit'],
    cwd: path.join(__dirname, '..'),
  });
}
