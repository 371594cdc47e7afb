# The API image: build with the dev dependencies, run with production ones only.
FROM node:20-bookworm-slim AS build
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
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 OPS_HOST=0.0.0.0 OPS_PORT=9464
COPY --from=build /app /app
EXPOSE 8080 9464
VOLUME /data
ENTRYPOINT ["node", "bin/visibility-api.js"]
CMD ["serve", "--db", "/data/visibility.db"]
