# The image deploy/ runs (limitswitch/limitswitch:0.1.0): the CLI with its runtime dependencies only.
# `docker build -t limitswitch/limitswitch:0.1.0 .` — the TypeScript runs through tsx, no build step.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY api-spec ./api-spec
COPY examples ./examples
# Matches the manifests' runAsUser/runAsGroup; the root filesystem may be read-only (tsx caches in /tmp).
USER 10001:10001
ENTRYPOINT ["node", "bin/limitswitch.js"]
CMD ["--help"]
