# svc image: Node 24 slim, production dependencies only, runs as the unprivileged `node` user, svc_ctl on PATH,
# `svc start` in the foreground as PID 1 (it handles SIGTERM: DISCONNECT 0x8B to 5.0 clients,
# deregistration from the cluster, exit). Config in /opt/svc/etc, data in /opt/svc/data.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The `node` devDependency (a Node binary for machines whose system Node is older) is not needed
# on this base image: install scripts are skipped.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /opt/svc
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist dist
COPY bin bin
COPY etc etc
RUN mkdir -p /opt/svc/data /opt/svc/log && chown -R node:node /opt/svc/data /opt/svc/log \
  && ln -s /opt/svc/bin/svc.js /usr/local/bin/svc && ln -s /opt/svc/bin/svc_ctl.js /usr/local/bin/svc_ctl
USER node
EXPOSE 1883 8883 8083 8084 8081 8080 18083 5369
VOLUME ["/opt/svc/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8081/status').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node flags as `npm start` passes them: --v8-pool-size=0 sizes V8's background threads (GC,
# compilation) to the CPUs the process may use, one left for the event loop (Node's default is 4).
ENTRYPOINT ["node", "--v8-pool-size=0", "/opt/svc/bin/svc.js"]
CMD ["start"]
