# The fitq CLI. Run a worker with:
#   docker run --rm -e FITQ_REDIS_URL=redis://HOST:6379 IMAGE worker -r "cpu=2"

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the "prepare" script builds, and the sources are not here yet.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY --from=build /app/oclif.manifest.json ./
USER node
ENTRYPOINT ["node", "/app/bin/run.js"]
CMD ["--help"]
