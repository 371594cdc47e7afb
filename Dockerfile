# The API image: build with the dev dependencies, run with production ones only, as a non-root user.
# Node 24, the maintained LTS line: the version CI installs (.ci/run NODE_VERSION) and engines allows
# (>=24 in package.json); test/build/node-version.test.ts checks the three agree.
FROM node:24.22.3-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY schemas schemas
COPY fixtures fixtures
COPY bench bench
COPY bin bin
COPY web web
COPY scripts scripts
COPY clients clients
RUN npm run build && npm prune --omit=dev

FROM node:24.22.3-bookworm-slim
WORKDIR /app
# The ops port listens beyond loopback (probes and scrapers reach it from outside the container), so
# serve needs OPS_TOKEN, a secret of the operator's (docker run -e OPS_TOKEN=...; e.g. openssl rand
# -hex 32): without it, it refuses to start. /livez, /readyz and /metrics need no token; /snapshot does.
ENV NODE_ENV=production LOG_FORMAT=json MALLOC_ARENA_MAX=2 HOST=0.0.0.0 PORT=8080 OPS_HOST=0.0.0.0 OPS_PORT=9464
# The code belongs to root and is read-only for the service; only /data is the service's to write.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080 9464
VOLUME /data
# Liveness on the ops port (no curl in the slim image: node's own fetch).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.OPS_PORT || 9464) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 and handles SIGTERM (docker stop): a graceful stop well within docker's 10 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/visibility-api.js"]
CMD ["serve", "--db", "/data/visibility.db"]
