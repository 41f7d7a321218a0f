// Composition root: the only place that wires concrete implementations together. It turns the
// validated Config into the core's settings, builds the broker, registers the plugins, starts the
// listeners, and stops everything in order on SIGTERM/SIGINT.

import { mkdirSync } from "node:fs";
import { type RunningApi, startManagementApi } from "./api/index.ts";
import { clientidProvider } from "./auth/clientid-provider.ts";
import { type AlarmSink, httpProvider } from "./auth/http-provider.ts";
import { AccessControl } from "./auth/index.ts";
import { jwtProvider } from "./auth/jwt-provider.ts";
import { ldapProvider } from "./auth/ldap-provider.ts";
import { mongoProvider } from "./auth/mongo-provider.ts";
import { mysqlProvider } from "./auth/mysql-provider.ts";
import { pgsqlProvider } from "./auth/pgsql-provider.ts";
import { PskFilePlugin } from "./auth/psk-file.ts";
import { redisProvider } from "./auth/redis-provider.ts";
import { usernameProvider } from "./auth/username-provider.ts";
import { bridgeResourceTypes, dataToMqttBrokerAction } from "./bridges/bridge-resource.ts";
import { Bridges } from "./bridges/bridges.ts";
import { Broker } from "./broker/broker.ts";
import type { ClusterNode } from "./cluster/cluster-node.ts";
import { drain } from "./cluster/drain.ts";
import { fetchClusterSettings, forgetJoined, resolveClusterConfig, seedAddress, writeJoined } from "./cluster/join.ts";
import { clusteredOnEtcd, clusterKeys, openStore } from "./cluster/open-store.ts";
import { type Config, ConfigError } from "./config/index.ts";
import { createListener } from "./listeners/create-listener.ts";
import type { Listener } from "./listeners/listener.ts";
import type { ConnectionHandler, StreamOwner } from "./listeners/types.ts";
import { type MetricsSdk, startMetricsSdk } from "./metrics-sdk.ts";
import type { Services, SvcNode } from "./node.ts";
import { accessSettings, brokerSettings, linkTls, managementBinds, sysSettings } from "./node-settings.ts";
import { logOtelDiagnostics } from "./otel-diag.ts";
import { PluginRegistry } from "./plugins/registry.ts";
import { Retainer } from "./retainer/retainer.ts";
import { RuleEngine } from "./rules/engine/engine.ts";
import { AclService } from "./services/acl.ts";
import { AppService, type StoredApp } from "./services/apps.ts";
import { AuthEntryService } from "./services/auth-entries.ts";
import { BannedService } from "./services/banned.ts";
import { BridgeService } from "./services/bridges.ts";
import { ClientService } from "./services/clients.ts";
import { ClusterService } from "./services/cluster.ts";
import { type ClusterCalls, LocalCalls, NodeCallError, type ViewHandler } from "./services/cluster-calls.ts";
import { SecretHasher, type SetupMarker, setUpCredentials } from "./services/credentials.ts";
import { DataService } from "./services/data.ts";
import { ListenerService } from "./services/listeners.ts";
import { LogService } from "./services/log.ts";
import { MetricsService } from "./services/metrics.ts";
import { NodeService } from "./services/nodes.ts";
import { PluginService } from "./services/plugins.ts";
import { PublishService } from "./services/publish.ts";
import { storeRecords } from "./services/records.ts";
import { RetainerService } from "./services/retainer.ts";
import { RuleService } from "./services/rules.ts";
import { SessionService } from "./services/sessions.ts";
import { NO_REMOTE_ROUTES, SubscriptionService } from "./services/subscriptions.ts";
import { TraceService } from "./services/trace.ts";
import { type StoredUser, UserService } from "./services/users.ts";
import { descriptorLimitWarning, openFileLimit } from "./sys/descriptors.ts";
import { startSys } from "./sys/index.ts";
import { VERSION } from "./sys/node-info.ts";
import { createLogger, type RootLogger } from "./telemetry/logger.ts";
import { BrokerTracing } from "./tracing/broker-tracing.ts";
import { startTracingSdk, type TracingSdkOptions } from "./tracing-sdk.ts";

/** Plugins loaded on a first start (before `<data_dir>/loaded_plugins` exists). */
/** The owner of a connection refused while the node drains. */
const REFUSED_WHILE_DRAINING: StreamOwner = { streamError() {}, streamClosed: () => "draining" };

const DEFAULT_PLUGINS = ["svc_retainer", "svc_rule_engine"];

/** How long a management view waits for another node's answer. */
const MGMT_CALL_TIMEOUT_MS = 5000;

/**
 * The services' ClusterCalls over the inter-node link: the running nodes are the membership's,
 * a call to this node runs in-process, one to another node goes through ClusterNode.call (any
 * failure, timeout included, is a NodeCallError), and every handler is also served to the others.
 */
class LinkedCalls extends LocalCalls {
  constructor(
    private readonly cluster: ClusterNode,
    self: string,
    private readonly timeoutMs: number,
  ) {
    super(self);
  }

  override nodes(): string[] {
    const running = this.cluster.runningNodes().map((r) => r.node);
    return running.length === 0 ? [this.self] : running;
  }

  override async call<T>(node: string, method: string, args: unknown): Promise<T> {
    if (node === this.self) return this.callLocal<T>(method, args);
    try {
      return (await this.cluster.call(node, method, args, this.timeoutMs)) as T;
    } catch (err) {
      throw new NodeCallError(node, method, (err as Error).message, { cause: err });
    }
  }

  override register(method: string, handler: ViewHandler): void {
    super.register(method, handler);
    this.cluster.handle(method, (from, args) => handler(args, from));
  }
}

export interface StartOptions {
  logger?: RootLogger;
  /** Restarts the node in place (the `svc start` supervisor); a join or leave needs it. */
  onRestart?: () => void;
  /** Sweep period override (tests use a short one). */
  tickInterval?: number;
  /** bcrypt cost of API secrets and dashboard passwords (tests use a low one). */
  bcryptRounds?: number;
  /** Period of the rule engine's resource health checks (tests use a short one). */
  ruleHealthCheckMs?: number;
  /**
   * With `telemetry.tracing = on`: span processors instead of the OTLP exporter chosen by the
   * OTEL_* variables (tests pass an in-memory exporter), and a sampler instead of OTEL_TRACES_SAMPLER
   * with, optionally, its root ratio and parent-basedness (`sampling`) so that the facade can decide
   * without making spans (without it, every decision is the sampler's).
   */
  tracing?: TracingSdkOptions;
}

/** Builds and starts a node; on failure everything started so far is stopped again. */
export async function startNode(given: Config, opts: StartOptions = {}): Promise<SvcNode> {
  const nodeName = given.get("node.name");
  const logger = opts.logger ?? createLogger({ level: given.get("log.level"), node: nodeName });
  const dataDir = given.get("node.data_dir");
  mkdirSync(dataDir, { recursive: true });
  // manual/static discovery: a joined cluster on record (or a static seed's) runs this node in it.
  const config = await resolveClusterConfig(given, logger, linkTls(given));
  // Kubernetes discovery: built first, so that a node outside a pod without
  // cluster.k8s.apiserver fails before anything is started.
  let k8s: import("./k8s/discovery.ts").K8sDiscovery | undefined;
  if (config.get("cluster.discovery") === "k8s") {
    const { K8sDiscovery } = await import("./k8s/discovery.ts");
    k8s = new K8sDiscovery({
      apiserver: config.get("cluster.k8s.apiserver"),
      serviceName: config.get("cluster.k8s.service_name"),
      namespace: config.get("cluster.k8s.namespace"),
      addressType: config.get("cluster.k8s.address_type"),
      appName: config.get("cluster.k8s.app_name"),
      suffix: config.get("cluster.k8s.suffix"),
      logger,
    });
  }

  const settings = brokerSettings(config);
  if (opts.tickInterval !== undefined) settings.tickInterval = opts.tickInterval;
  const broker = new Broker(settings, logger);
  // Tracing: with `telemetry.tracing = off` nothing of OpenTelemetry is loaded and no hook is added.
  const sdk = config.get("telemetry.tracing")
    ? await startTracingSdk(
        nodeName,
        {
          maxDeliverSpans: config.get("telemetry.max_deliver_spans"),
          samplingRun: config.get("telemetry.sampling_run"),
        },
        opts.tracing,
      )
    : null;
  if (sdk !== null) new BrokerTracing(sdk.tracing, nodeName).attach(broker);
  const plugins = new PluginRegistry(dataDir, logger);
  // The node's one cluster store: management apps and users, bans and auth data now, every shared
  // feature later. Opened before the plugins load: the auth providers read it.
  const store = await openStore(config, { onError: (err) => logger.error({ err }, "cluster store error") });
  const keys = clusterKeys(config);
  const access = new AccessControl(broker, store, keys, accessSettings(config, settings.tickInterval), logger);
  const retainer = new Retainer(broker, {
    storageType: config.get("retainer.storage_type"),
    maxRetainedMessages: config.get("retainer.max_retained_messages"),
    maxPayloadSize: config.get("retainer.max_payload_size"),
    expiryInterval: config.get("retainer.expiry_interval"),
    dataDir,
  });
  plugins.register(retainer);
  // Authentication providers: the chain order is the order they are started in.
  const providerDeps = {
    chain: access.chain,
    store,
    keys,
    metrics: broker.metrics,
    logger,
    etcDir: config.get("plugins.etc_dir"),
    bcryptRounds: opts.bcryptRounds,
  };
  const authClientid = clientidProvider({ ...providerDeps, hash: config.get("auth.client.password_hash") });
  const authUsername = usernameProvider({
    ...providerDeps,
    hash: config.get("auth.user.password_hash"),
    scramIterations: config.get("auth.user.scram_iterations"),
  });
  const psk = new PskFilePlugin({
    path: config.get("psk.file.path"),
    delimiter: config.get("psk.file.delimiter"),
    logger,
  });
  // Providers with a back end raise their alarm once $SYS is up (it starts after the plugins).
  let alarmSink: AlarmSink | undefined;
  const backendDeps = {
    chain: access.chain,
    acl: access.acl,
    logger,
    etcDir: config.get("plugins.etc_dir"),
    alarms: () => alarmSink,
  };
  const authHttp = httpProvider(backendDeps);
  const authJwt = jwtProvider(backendDeps);
  for (const p of [authClientid, authUsername, authHttp, authJwt, ldapProvider(backendDeps), psk]) plugins.register(p);
  const dbProviders = [mysqlProvider, pgsqlProvider, redisProvider, mongoProvider].map((f) => f(backendDeps));
  for (const p of dbProviders) plugins.register(p);
  // Rules and resources are read from the store once sys is up (alarms, stats); the plugin only
  // switches the hooks.
  const rules = new RuleEngine({
    broker,
    store,
    keys,
    logger,
    healthCheckMs: opts.ruleHealthCheckMs,
    tracing: sdk?.tracing ?? null,
  });
  plugins.register(rules);
  const bridges = new Bridges({
    broker,
    etcDir: config.get("plugins.etc_dir"),
    nodeName,
    logger,
    tracing: sdk?.tracing ?? null,
  });
  plugins.register(bridges);
  // The bridge as a rule-engine resource (bridge_mqtt, bridge_rpc) and its action.
  for (const t of bridgeResourceTypes({ nodeName, dataDir, env: bridges.env })) rules.resourceTypes.set(t.name, t);
  rules.actions.set(dataToMqttBrokerAction.name, dataToMqttBrokerAction);
  try {
    await plugins.loadAtStart(DEFAULT_PLUGINS);
  } catch (err) {
    await plugins.stopAll();
    await store.close();
    await sdk?.shutdown();
    throw err;
  }

  // Built now (started below, once the node's own parts are up) so that the services register
  // their cluster call handlers on it. Loaded only when clustered: a single node never loads the
  // link and membership code. Kubernetes discovery clusters on etcd too, with the peers of the
  // headless Service's EndpointSlices (only then is the Kubernetes client loaded).
  let clusterNode: ClusterNode | null = null;
  if (clusteredOnEtcd(config)) {
    const { ClusterNode } = await import("./cluster/cluster-node.ts");
    clusterNode = new ClusterNode({
      broker,
      store,
      keys,
      nodeName: config.get("node.name"),
      cookie: config.get("node.cookie"),
      bind: { host: "0.0.0.0", port: config.get("rpc.tcp_server_port") },
      tls: linkTls(config),
      settings: {
        servers: config.get("cluster.etcd.server"),
        prefix: config.get("cluster.etcd.prefix"),
        name: config.get("cluster.name"),
      },
      ttlMs: config.get("cluster.etcd.node_ttl"),
      version: VERSION,
      retained: retainer,
      logger,
      peers: k8s,
    });
  }
  const linked = clusterNode;
  const calls: ClusterCalls =
    linked === null ? new LocalCalls(nodeName) : new LinkedCalls(linked, nodeName, MGMT_CALL_TIMEOUT_MS);
  bridges.useRpc(calls);

  const listeners: Listener[] = [];
  // From the start of a drain (or stop) on, new MQTT connections are closed as they arrive.
  let refusing = false;
  const accept: ConnectionHandler = (stream, info) => {
    if (!refusing) return broker.handleConnection(stream, info);
    stream.destroy(); // its 'close' comes later, and is counted as "draining"
    return REFUSED_WHILE_DRAINING;
  };
  let draining: Promise<void> | null = null;
  const drainAbort = new AbortController();
  let stopped: Promise<void> | null = null;
  const stopOnce = (): Promise<void> => {
    stopped ??= stopAll();
    return stopped;
  };
  broker.start();
  const sys = startSys(broker, retainer, sysSettings(config));
  alarmSink = sys.alarms;
  clusterNode?.useAlarms(sys.alarms);
  k8s?.useAlarms(sys.alarms);
  clusterNode?.useSysmon((node, bytes) => sys.sysmon.busyDistPort(node, bytes), config.get("sysmon.busy_port_bytes"));
  const nodes = new NodeService(
    {
      nodeName,
      startedAt: broker.startedAt,
      connections: () => broker.sessions.connectedCount,
    },
    calls,
  );
  const listenerViews = new ListenerService(calls);
  listenerViews.addSource(() => listeners.map((l) => l.info()));
  const hasher = new SecretHasher(opts.bcryptRounds);
  const services: Services = {
    clients: new ClientService(broker, access.acl.caches, calls),
    subscriptions: new SubscriptionService(broker, calls, linked?.routes ?? NO_REMOTE_ROUTES),
    publish: new PublishService(broker),
    metrics: new MetricsService(broker, sys, calls),
    trace: new TraceService(sys.tracer),
    bridges: new BridgeService(bridges, () => plugins.isActive(bridges.name)),
    log: new LogService(logger),
    nodes,
    sessions: new SessionService(broker, calls),
    plugins: new PluginService(plugins, calls),
    listeners: listenerViews,
    apps: new AppService(
      storeRecords<StoredApp>(store, keys.apps(), (id) => keys.app(id)),
      hasher,
    ),
    users: new UserService(
      storeRecords<StoredUser>(store, keys.users(), (name) => keys.user(name)),
      hasher,
      config.get("dashboard.default_user.login"),
    ),
    banned: new BannedService(access.bans),
    authClientid: new AuthEntryService(authClientid.credentials),
    authUsername: new AuthEntryService(authUsername.credentials),
    data: new DataService({ store, keys, dataDir, calls, onImported: () => hasher.forget() }),
    acl: new AclService(access.acl),
    retainer: new RetainerService(retainer),
    rules: new RuleService(rules, nodeName, calls),
    cluster: new ClusterService(
      nodeName,
      linked === null
        ? null
        : {
            running: () => linked.runningNodes().map((r) => r.node),
            stopped: () => linked.stoppedNodes(),
            forget: (node) => linked.forget(node),
          },
      {
        discovery: given.get("cluster.discovery"),
        join: async (node, address) => {
          const to = address ?? seedAddress(node, given.get("rpc.tcp_server_port")).address;
          const tls = linkTls(given);
          const s = await fetchClusterSettings({
            nodeName,
            cookie: given.get("node.cookie"),
            peer: node,
            address: to,
            logger,
            tls,
          });
          writeJoined(dataDir, s);
          logger.info({ peer: node }, "joined a cluster; restarting in it");
        },
        leave: () => forgetJoined(dataDir),
        restart: () => {
          if (opts.onRestart !== undefined) setTimeout(opts.onRestart, 50).unref();
          else logger.warn({}, "cluster change recorded: restart the node to apply it");
        },
      },
    ),
  };
  let management: RunningApi | undefined;
  let cluster: ClusterNode | null = null;
  let metricsSdk: MetricsSdk | null = null;
  try {
    // Bans and the ACL rules (a rule file that does not parse stops the start with file:line).
    await access.start();
    await rules.start(sys.alarms, sys.stats);
    const warnings = await setUpCredentials(
      services.apps,
      services.users,
      storeRecords<SetupMarker>(store, `${keys.root}mgmt/`, (id) => `${keys.root}mgmt/${id}`),
      {
        appId: config.get("management.default_application.id"),
        appSecret: config.get("management.default_application.secret"),
        userPassword: config.get("dashboard.default_user.password"),
      },
      hasher,
    );
    for (const w of warnings) logger.warn({}, w);
    if (clusterNode !== null) {
      cluster = clusterNode;
      await cluster.start();
    }
    // Before the MQTT listeners, so that probes see `/status` answer 503 while the node starts.
    management = await startManagementApi(
      { services, maxRowLimit: config.get("management.max_row_limit"), logger, tracing: sdk?.tracing ?? null },
      managementBinds(config),
      logger,
    );
    for (const l of config.listeners()) {
      const psked = l.pskCiphers !== undefined && l.pskCiphers.length > 0;
      if (psked && l.ciphers !== undefined && l.ciphers.length > 0)
        throw new ConfigError(`listener.${l.kind}.${l.name}: psk_ciphers and ciphers cannot both be set`);
      const listener = createListener(
        {
          kind: l.kind,
          name: l.name,
          bind: l.bind,
          zone: l.zone,
          maxConnections: l.maxConnections,
          backlog: l.backlog,
          nodelay: l.nodelay,
          keyfile: l.keyfile,
          certfile: l.certfile,
          cacertfile: l.cacertfile,
          verify: l.verify,
          failIfNoPeerCert: l.failIfNoPeerCert,
          tlsVersions: l.tlsVersions,
          ciphers: (psked ? l.pskCiphers : l.ciphers)?.join(":"),
          pskCallback: psked ? psk.lookup : undefined,
          mqttPath: l.mqttPath,
          handshakeTimeout: l.handshakeTimeout,
          acceptors: l.acceptors,
        },
        accept,
        { dataDir, logger },
      );
      await listener.start();
      listeners.push(listener);
    }
    const accepted = config.listeners().reduce((n, l) => n + l.maxConnections, 0);
    const maxFds = openFileLimit();
    const fdWarning = descriptorLimitWarning(maxFds, accepted);
    if (fdWarning !== null) logger.warn({ max_fds: maxFds, max_connections: accepted }, fdWarning);
    // Where clients of a draining peer may be sent (5.0 Server Reference).
    const tcp = listeners.find((l) => l.protocol === "mqtt:tcp");
    if (cluster !== null && tcp !== undefined) {
      await cluster
        .advertise({ mqtt: `${nodeName.slice(nodeName.indexOf("@") + 1)}:${tcp.port}` })
        .catch((err: unknown) => logger.warn({ err: (err as Error).message }, "could not advertise the MQTT address"));
    }
    // OTLP metrics (the last step: nothing after it can fail); off: nothing of the SDK is loaded.
    if (config.get("telemetry.metrics")) {
      metricsSdk = await startMetricsSdk(nodeName, () => {
        const m = services.metrics;
        return {
          node: m.node,
          metrics: m.metrics(),
          stats: m.stats(),
          listeners: services.listeners.local(),
          alarmsActive: m.alarmsPresent().length,
        };
      });
    }
  } catch (err) {
    for (const l of listeners) await l.stop();
    broker.stop();
    await sys.stop();
    await clusterNode?.stop(); // built before the try: its constructor adds hooks
    await plugins.stopAll();
    await rules.stop();
    await access.stop();
    await management?.server.stop();
    await store.close();
    await sdk?.shutdown();
    throw err;
  }
  if (sdk !== null || metricsSdk !== null) await logOtelDiagnostics(logger);
  nodes.setState("running");
  const api = management;

  const node: SvcNode = {
    config,
    logger,
    broker,
    plugins,
    retainer,
    rules,
    sys,
    cluster,
    services,
    store,
    api: api.api,
    managementPort: (name) => api.server.port(name),
    listeners,
    port(kind) {
      const l = listeners.find((x) => x.protocol === `mqtt:${kind}`);
      if (l === undefined) throw new Error(`no ${kind} listener`);
      return l.port;
    },
    listenerInfo: () => listeners.map((l) => l.info()),
    async drain() {
      draining ??= drain({
        broker,
        cluster,
        setDraining: () => nodes.setState("draining"),
        refuseConnections: () => {
          refusing = true;
        },
        closeListeners: async () => {
          for (const l of listeners) await l.stop();
        },
        timeoutMs: config.get("node.drain_timeout"),
        logger,
        signal: drainAbort.signal,
      }).then(
        () => {},
        (err: unknown) => logger.error({ err }, "drain failed"),
      );
      await draining;
      await stopOnce();
    },
    async stop() {
      // During a drain: stop waiting, and stop at once.
      drainAbort.abort();
      await draining;
      await stopOnce();
    },
  };
  logger.info({ node: nodeName, dataDir }, "node started");
  return node;

  async function stopAll(): Promise<void> {
    nodes.setState("draining");
    refusing = true;
    // DISCONNECT 0x8B to 5.0 clients first, then close the listeners and what they still hold.
    broker.stop();
    for (const l of listeners) await l.stop();
    // After the broker: the shutdown's client disconnections still reach $SYS and the traces.
    await sys.stop();
    // Deregisters: this node's routes and registrations leave the cluster with its lease.
    await cluster?.stop();
    await plugins.stopAll();
    await rules.stop();
    await access.stop();
    // Last: probes see 503 on /status while the node drains.
    await api.server.stop();
    await store.close();
    // Flushes the spans still batched, and exports the metrics a last time.
    await sdk?.shutdown();
    await metricsSdk?.shutdown();
    logger.info({}, "node stopped");
  }
}
