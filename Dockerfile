# Production image of Switchyard: one image, two processes.
#   API (default command): node dist/processes/api-main.js
#   worker:                node dist/processes/worker-main.js
# Both need DATABASE_URL and TEMPORAL_ADDRESS; docker-compose.yml shows the whole stack.
#
# Debian (glibc), not Alpine: @temporalio/core-bridge ships its native module prebuilt for
# x86_64/aarch64-unknown-linux-gnu only. Node 22 LTS; any Node >= 20.19 works (package.json engines).
ARG NODE_IMAGE=node:22-trixie-slim

# --- build: every dependency, then tsc, the workflow bundle and the console (`npm run build` writes dist/) ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The typed client is an npm workspace: npm ci needs its package.json, the build its sources.
COPY clients/typescript/package.json ./clients/typescript/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY clients ./clients
COPY scripts ./scripts
COPY core ./core
COPY platform ./platform
COPY src ./src
COPY workers ./workers
COPY processes ./processes
COPY console ./console
RUN npm run build

# --- production-dependencies: runtime packages only (@temporalio/testing is a development dependency) ---
FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# --- runtime ---
FROM ${NODE_IMAGE} AS runtime
# The Temporal core bridge verifies TLS (Temporal Cloud, a TLS frontend) against the system roots.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# glibc gives every thread that allocates (the Temporal core's, Node's) a malloc arena of its own; two
# keep a worker's memory some 50 MB lower under load, at no measurable cost.
ENV MALLOC_ARENA_MAX=2
# The service finds its root by walking up to package.json, then reads <root>/migrations and
# <root>/dist/workflow-bundle.js: keep this layout.
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY migrations ./migrations
COPY --from=build /app/dist/core ./dist/core
COPY --from=build /app/dist/platform ./dist/platform
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/workers ./dist/workers
COPY --from=build /app/dist/processes ./dist/processes
COPY --from=build /app/dist/workflow-bundle.js ./dist/workflow-bundle.js
# The web console's files (Vite's build), served by the API at /.
COPY --from=build /app/dist/console ./dist/console
COPY --from=build /app/dist/api-reference ./dist/api-reference
# Every process creates DATA_DIR (./.data) at start, even with DATABASE_URL set; the code stays root-owned.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
# No HEALTHCHECK here: the worker runs this image too and serves no HTTP; docker-compose.yml gives
# the API its /readyz check.
CMD ["node", "dist/processes/api-main.js"]
