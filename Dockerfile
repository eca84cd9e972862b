# syntax=docker/dockerfile:1
# dispatch image: `docker build -t dispatch:0.1.0 .`
# Multi-stage: compile TypeScript with every dependency, then ship only production dependencies,
# the compiled JS, the protos and the examples, running as the non-root user 10001.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: npm ci with dev dependencies, then tsc --------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY proto ./proto
COPY gen ./gen
COPY src ./src
RUN npm run build

# ---- deps: production dependencies only ------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
LABEL org.opencontainers.image.title="dispatch" \
      org.opencontainers.image.description="Executes LLM tool calls for agent backends over gRPC" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production \
    TMPDIR=/tmp
# tini runs as PID 1: it forwards SIGTERM/SIGINT to node (PID 1 itself would ignore a signal it
# has no handler for yet, e.g. while node loads its modules) and reaps orphaned processes, such as
# the children an MCP stdio server leaves behind.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 dispatch \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin dispatch
WORKDIR /app
# Everything stays owned by root and read-only to the server (the chart also mounts the root
# filesystem read-only); scratch files go to $TMPDIR.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY proto ./proto
COPY examples ./examples
USER 10001:10001
# gRPC (DISPATCH_LISTEN) and Prometheus metrics (DISPATCH_METRICS_LISTEN, off unless set).
EXPOSE 50051 9464
# In a container the server must listen beyond loopback: set DISPATCH_LISTEN=0.0.0.0:50051 (the
# Helm chart does) together with auth tokens, or DISPATCH_INSECURE=1 for a trusted test setup.
# Without -g: a signal goes to node alone, which drains its calls before it closes its MCP servers.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/dispatchd.js"]
