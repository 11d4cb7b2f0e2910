# The service as compiled JavaScript on Node 20, run as the unprivileged `node` user (docs/deploy.md).
# Build: docker build -t agent-console .   Run: see deploy/compose.yaml.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY domain ./domain
COPY ports ./ports
COPY core ./core
COPY adapters ./adapters
COPY src ./src
COPY client ./client
COPY scripts ./scripts
COPY tsconfig.json ./
# Type-checked here too: an image is never built from sources that do not check.
RUN npx tsc --noEmit -p .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# Exec form: SIGTERM from `docker stop` reaches node, which drains and exits within 10 s.
CMD ["node", "dist/src/main.js"]
