# One image for the gateway and every subgraph; docker-compose.yml picks the command. Alone it runs
# `npm start`'s command: the gateway with every subgraph in its process on the embedded database.
FROM node:24-bookworm-slim
WORKDIR /app
# HOST: every interface of the container (the server's own default is loopback, which nothing
# outside the container reaches). DATA_DIR: generated keys, and PGlite's data when no DATABASE_URL.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/app/.data
# glibc's malloc: two arenas instead of up to 8 per core for the process's threads (V8's, libuv's, the
# workers'), and freed memory given back above 128 KiB (its default, which a fixed value keeps from
# growing to 64 MiB after start-up's large buffers): ~50 MiB less idle, no CPU cost measured
# (docs/benchmarks.md, "Idle memory by component"). npm start sets the same.
ENV MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
# Only what .dockerignore lets through: package files, gateway/, subgraphs/, schema/; never .env or keys.
COPY . .
# What npm ci's postinstall would have prepared had subgraphs/ been there (the PGlite cluster template
# and the Risk Index's data, under node_modules/.cache), while node_modules is still writable; made
# readable by the runtime user (the folder is created private).
RUN node subgraphs/prepare-cli.ts && chmod -R a+rX node_modules/.cache
# DATA_DIR must be writable by the runtime user (mount a volume there to keep it).
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# npm start's command (package.json), flags and preloads alike (test/docker/commands.test.ts): the compile
# cache preload keeps V8's compiled code under the OS temporary folder; the tracing preload loads the
# OpenTelemetry SDK only when OTEL_* variables ask for traces.
CMD ["node", "--max-semi-space-size=16", "--import", "./gateway/compile-cache.ts", "--import", "./subgraphs/platform/tracing/preload.ts", "gateway/server.ts"]
