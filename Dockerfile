# syntax=docker/dockerfile:1
# One image for the API, the worker and the one-shot migration (see docker-compose.yml).
# Node 24 (the recommended version) on Debian (glibc): the prebuilt native modules (Temporal core bridge, swc)
# target glibc.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# npm 11.19 is what the repo uses: it honours package.json's `allowScripts`, so only the listed dependencies
# run install scripts. Pinned, because the npm bundled with node:24 changes with every Node 24 release.
ARG NPM_VERSION=11.19.1
RUN npm install -g npm@${NPM_VERSION}
COPY package.json package-lock.json ./
# The client SDK is a workspace of package.json: npm ci needs its manifest (the image does not build it).
COPY sdk/typescript/package.json ./sdk/typescript/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
# Layout mirrors the repo: paths.ts finds package.json above dist/ and reads JSON schemas from schemas/
# next to it; the worker bundles each task queue's dist/workflows when it starts (webpack and swc are runtime dependencies).
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY schemas ./schemas
# The console's stylesheet and script, read from src/console/assets as in the repo, and the database's functions and
# triggers, applied from src/db/sql after the migrations.
COPY src/console/assets ./src/console/assets
COPY src/db/sql ./src/db/sql
USER node
EXPOSE 3000
CMD ["npm", "run", "start:api"]
