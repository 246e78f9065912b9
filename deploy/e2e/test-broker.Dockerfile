# syntax=docker/dockerfile:1
# scriptorium/test-broker — a fixture of the end-to-end suite, beside it: the harness's test broker (an NGSI-v2/NGSI-LD
# stand-in with subscriptions) as a small image of its own, which the suite's watch step runs as a pod. It is never
# published, and no product image carries the harness. Built from the repository root as context:
#   docker build -f deploy/e2e/test-broker.Dockerfile -t scriptorium/test-broker:dev .
# It holds the broker's sources and their one dependency, undici (the lockfile's version), on Node 24.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
# npm ci checks the lockfile against every workspace manifest, so this stage sees them all; only undici leaves it.
COPY . .
RUN npm ci --omit=dev --workspace @scriptorium/harness --include-workspace-root=false \
      --ignore-scripts --no-audit --no-fund --loglevel=error \
 && test -f node_modules/undici/package.json \
 && rm -rf /root/.npm

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules/undici ./node_modules/undici
# The harness's manifest says "type": "module"; the broker imports nothing else of the harness.
COPY --chown=root:root harness/package.json ./harness/package.json
COPY --chown=root:root harness/src/test-broker ./harness/src/test-broker
# The image's `node` user (uid/gid 1000), numeric so runAsNonRoot can verify it. The broker writes nothing to disk.
USER 1000:1000
EXPOSE 1026
# Node is PID 1 and closes the broker on SIGTERM. Arguments: main.ts's (--api, --port, --entities, --attrs, …).
ENTRYPOINT ["node", "harness/src/test-broker/main.ts"]
CMD ["--host", "0.0.0.0", "--port", "1026"]
