# The image deploy/ runs (limitswitch/limitswitch:0.1.0): the CLI with its runtime dependencies only.
# `docker build -t limitswitch/limitswitch:0.1.0 .` — Node.js 24 runs the TypeScript as it is (it strips
# the types itself): no build step, no transpiler in the image.

# re2 (the regex engine every configured pattern runs on) is a native addon: its install script fetches
# a prebuilt binary or builds it with node-gyp, which needs python3, make and g++. They stay in this stage.
FROM node:24-bookworm-slim AS dependencies
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=dependencies /app/node_modules ./node_modules
COPY bin ./bin
COPY src ./src
COPY api-spec ./api-spec
COPY examples ./examples
# Matches the manifests' runAsUser/runAsGroup; the root filesystem may be read-only.
USER 10001:10001
ENTRYPOINT ["node", "bin/limitswitch.js"]
CMD ["--help"]
