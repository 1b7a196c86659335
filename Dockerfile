# Hangar server image: multi-stage, production dependencies only, runs as a non-root user, and uses an
# external PostgreSQL (DATABASE_URL); the embedded database is for laptops, not containers.
#   docker build -t hangar .
#   docker run -p 8124:8124 -e DATABASE_URL=postgres://… -e HANGAR_SECRET_KEY=… hangar

# 1. Build: every dependency (TypeScript and Vite among them), compile src/ into dist/ and the Console into dist/console/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY ui ./ui
RUN npx tsc -p tsconfig.build.json
# The Console (`/`): ui/ built into dist/console/, as `npm run build:console` does.
RUN npx vite build --config ui/vite.config.ts

# 2. Production dependencies only (install scripts off: the embedded PostgreSQL binaries are not used).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. Runtime: the compiled server, its migrations and deployment templates, as the `node` user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8124 HANGAR_DATA_DIR=/var/lib/hangar
WORKDIR /app
# git: deployments of the local driver fetch repositories with it.
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /var/lib/hangar && chown node:node /var/lib/hangar
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
COPY --chown=node:node bin ./bin
COPY --chown=node:node migrations ./migrations
COPY --chown=node:node templates ./templates
USER node
EXPOSE 8124
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8124)+'/ok').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/hangar.js"]
CMD ["serve"]
