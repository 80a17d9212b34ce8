// A local fleet in one command, on loopback, with every tier as shipped: N agent hosts, each a `ccotel run` sidecar
// with its own HOME (its transcripts under HOME/.claude), host name (OTEL_RESOURCE_ATTRIBUTES host.name) and state,
// sending OTLP/HTTP to one scale-out collector (collector-config/scale-out.yaml, its load_balancing exporter) that
// routes by trace id to two gateways (collector-config/gateway.yaml), whose real clickhouse exporter writes into
// ClickHouse: the test front over the embedded engine (test/helpers/clickhouse-http-front.ts, tables made by
// schemas/sql) unless --clickhouse names a server. Only endpoints, ports, directories and the token are set; the
// fleet tests (test/e2e/fleet.test.ts) and bench/fleet.ts start it through LocalFleet.
//
// The command: deploy/local-fleet-cli.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { collectorConfigDir } from '../test/collector/binary.js';
import { Gateway } from '../test/collector/otlp-gateway.js';
import { ClickHouseFrontProcess } from '../test/helpers/clickhouse-front-process.js';

const repoRoot = resolve(import.meta.dirname, '..');
const CLI = join(repoRoot, 'sidecar', 'bin', 'ccotel.cjs');

export interface FleetOptions {
  /** Everything the fleet writes goes under it (homes, queues, logs, the test front's data). */
  dir: string;
  /** Host names, one sidecar each. */
  hosts: string[];
  gateways?: number;
  /** A ClickHouse server's HTTP URL; default: the test front, started here. */
  clickhouse?: string;
  /** The gateways' environment knobs beyond endpoints (e.g. CCOTEL_TRACE_SAMPLE_PERCENT). */
  gatewayEnv?: Record<string, string>;
  /** More `ccotel run` arguments (e.g. --idle). */
  runArgs?: string[];
  /** Each host also keeps its own embedded store (HOME/store): what the fleet's store must equal the union of. */
  hostStores?: boolean;
}

/** One agent host: a `ccotel run` sidecar with its own HOME and host name. */
export class FleetHost {
  readonly home: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    dir: string,
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly args: () => string[],
  ) {
    this.home = join(dir, 'hosts', name);
    mkdirSync(join(this.home, '.claude', 'projects'), { recursive: true });
  }

  /** Its own embedded store, when the fleet keeps one per host. */
  get store(): string {
    return join(this.home, 'store');
  }

  /** Where its transcripts go, as Claude Code writes them (HOME/.claude/projects/<project>/<session>.jsonl). */
  get projects(): string {
    return join(this.home, '.claude', 'projects');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The environment its sidecar runs with (also what a reference `ccotel backfill` of this host needs). */
  hostEnv(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: this.home,
      // The caller's temporary directory (a test run's own), where a sidecar puts its status while its state dir refuses it.
      TMPDIR: process.env.TMPDIR,
      CCOTEL_CONFIG: 'none',
      CCOTEL_MANAGED_SETTINGS_DIR: join(this.home, 'managed-settings'),
      CCOTEL_NATIVE_TELEMETRY_PORT: '0',
      OTEL_RESOURCE_ATTRIBUTES: `host.name=${this.name}`,
      ...this.env(),
    };
  }

  start(): void {
    const log = createWriteStream(join(this.home, 'sidecar.log'), { flags: 'a' });
    const child = spawn(process.execPath, [CLI, 'run', ...this.args()], { env: this.hostEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.child = child;
    running.add(child);
    this.exited = new Promise((done) => child.once('exit', () => (running.delete(child), done())));
  }

  /** SIGTERM: the sidecar saves its place and its unsent data, as on Ctrl-C; SIGKILL: a crash. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await this.exited;
  }
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class LocalFleet {
  readonly token = randomBytes(16).toString('hex');
  readonly front: ClickHouseFrontProcess | undefined;
  /** Made by start(): their ports, and so the scale-out tier's list of them, are chosen then. */
  gateways: Gateway[] = [];
  scaleOut: Gateway | undefined;
  readonly hosts: FleetHost[];

  constructor(private readonly options: FleetOptions) {
    this.front = options.clickhouse ? undefined : new ClickHouseFrontProcess(join(options.dir, 'clickhouse'), join(options.dir, 'clickhouse.log'));
    this.hosts = options.hosts.map(
      (name) =>
        new FleetHost(
          name,
          options.dir,
          () => ({ OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${this.token}` }),
          () => ['--store', options.hostStores ? join(options.dir, 'hosts', name, 'store') : 'none', '--otlp', this.scaleOut!.url, ...(options.runArgs ?? [])],
        ),
    );
  }

  /** The fleet's store, for `ccotel report --store` and the dashboards' SQL. */
  get storeUrl(): string {
    return this.options.clickhouse ?? this.front!.url;
  }

  async start(): Promise<void> {
    const { dir, gatewayEnv } = this.options;
    await this.front?.start();
    this.gateways = Array.from(
      { length: this.options.gateways ?? 2 },
      (_, i) =>
        new Gateway({
          dir: join(dir, `gateway-${i + 1}`),
          token: this.token,
          clickhouseEndpoint: this.storeUrl,
          env: { CCOTEL_GATEWAY_NAME: `gateway-${i + 1}`, ...gatewayEnv },
        }),
    );
    for (const gateway of this.gateways) await gateway.start();
    this.scaleOut = new Gateway({
      dir: join(dir, 'scale-out'),
      token: this.token,
      config: join(collectorConfigDir, 'scale-out.yaml'),
      noFileExport: true,
      env: { CCOTEL_GATEWAYS: `[${this.gateways.map((gateway) => gateway.grpcEndpoint).join(', ')}]` },
    });
    await this.scaleOut.start();
    for (const host of this.hosts) host.start();
  }

  /** Hosts first (they flush to the tiers), then the tiers front to back, then ClickHouse. */
  async stop(): Promise<void> {
    for (const host of this.hosts) await host.stop();
    await this.scaleOut?.stop();
    for (const gateway of this.gateways) await gateway.stop();
    await this.front?.stop();
  }
}
