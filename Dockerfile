# One image for the gateway and every subgraph; docker-compose.yml picks the command.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# glibc's malloc: two arenas instead of up to 8 per core for the process's threads (V8's, libuv's, the
# workers'), and freed memory given back above 128 KiB (its default, which a fixed value keeps from
# growing to 64 MiB after start-up's large buffers): ~50 MiB less idle, no CPU cost measured
# (docs/benchmarks.md, "Idle memory by component"). npm start sets the same.
ENV MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# DATA_DIR (generated keys; PGlite data when no DATABASE_URL) must be writable by the runtime user.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 4000
# The tracing preload loads the OpenTelemetry SDK only when OTEL_* variables ask for traces.
CMD ["node", "--max-semi-space-size=16", "--import", "./subgraphs/platform/tracing/preload.ts", "gateway/server.ts"]
