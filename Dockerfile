# syntax=docker/dockerfile:1
# The operator image: TypeScript compiled with tsc in a build stage (no compiler at run time,
# no per-start transpiling), production dependencies only, git for checkouts, a non-root user.

# Node 24 (LTS): the same major the tests run on (.ci/run installs it from the npm registry).
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY constructs ./constructs
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
# git: the checkout cache; ca-certificates: HTTPS to GitHub; tini: PID 1 (below). Nothing else
# (util-linux's unshare and setpriv, which the sandbox uses, are part of the base image).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# One malloc arena instead of one per thread: glibc's default lets native memory (TLS, HTTP
# parsers, the thread pool, V8's compiler threads) fragment across arenas. Two were ~6 MB more
# peak RSS than one in a burst of 200 environments (npm run bench, scenario 4).
ENV NODE_ENV=production MALLOC_ARENA_MAX=1
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# The CRDs travel with the image, for `kubectl apply -f` from it if the chart is not used.
COPY charts/preview-operator/crds ./crds
# The base image's unprivileged `node` user (uid 1000), numeric so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 9090
# V8's heap, sized for a controller: semi-spaces of 4 MB instead of 16 (16 → 8: peak RSS 175 → 145 MB
# in a burst of 40 environments, 0.14 s more GC; 8 → 4 with one arena: ~202 → ~189 MB in a burst of
# 200, the same CPU seconds), and the old generation grown to 1.5 × what a full GC left alive instead
# of up to 4 × (a burst of 200: V8 had reserved 144 MB for 48 MB alive; peak RSS 267 → 207 MB, the
# same CPU seconds). 1.25 × went another 13–20 MB lower for 20–40 % more CPU; --optimize-for-size
# went to 158 MB for 47 % more CPU.
# --disable-sigusr1: no process can open the operator's inspector with a signal.
# No --enable-source-maps: main.js turns them on for the operator's own files only (own-source-maps.ts);
# the flag would also hold node_modules' inline maps in the heap (3.5 MB).
# tini is PID 1: it reaps the processes orphaned under it (git's helpers, a sandbox run killed at its
# limit), which Node as PID 1 never waits for, and passes SIGTERM on to node, which drains and exits.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--disable-sigusr1", "--max-semi-space-size=4", "--heap-growing-percent=50", "dist/src/main.js"]
CMD ["run"]
