/**
 * `npm run build` step: copies Redoc's standalone bundle (the renderer of /docs) into dist, so production
 * installs (`npm ci --omit=dev`, the Docker image) serve the API reference without the `redoc` package and
 * the React, styled-components and mobx it pulls in (some 85 MB of node_modules for one 1.1 MB file).
 */
import fs from 'node:fs';
import path from 'node:path';
import { apiReferenceBundlePath } from '../platform/paths';

fs.mkdirSync(path.dirname(apiReferenceBundlePath), { recursive: true });
fs.copyFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), apiReferenceBundlePath);
