// Runs the real collector with collector-config/gateway.yaml and the file-exporter test overlay on free
// loopback ports, and reads what it wrote. Everything in the gateway runs as shipped; the environment
// only picks ports, directories and the tail-sampling knobs the config exposes:
//   CCOTEL_TRACE_SAMPLE_PERCENT=100  every ordinary turn is kept too, so every trace is expected in the output
//   CCOTEL_TAIL_ROOT_WAIT=1s, CCOTEL_TAIL_DECISION_WAIT=3s  decisions within seconds instead of a minute
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';
import { collectorConfigDir, requireCollectorBinary } from './binary.js';
import { exportFiles } from './otlp-json.js';

export interface GatewayOptions {
  dir: string;
  /** Overrides of the gateway's environment knobs. */
  env?: Record<string, string>;
  /** More config files merged over gateway.yaml and the overlay (benchmarks: what a processor costs). */
  extraConfigs?: string[];
  /** Another gateway config in place of collector-config/gateway.yaml (benchmarks: an earlier version). */
  config?: string;
  /** Another file-exporter overlay in place of this tree's: an earlier gateway's own, which names only its pipelines. */
  overlay?: string;
  /**
   * Export through the shipped clickhouse exporter to this endpoint (e.g. test/helpers' ClickHouse front) instead
   * of the file-exporter overlay; outputLines() is then empty.
   */
  clickhouseEndpoint?: string;
  /** Without the file-exporter overlay (a config that exports elsewhere, e.g. scale-out.yaml). */
  noFileExport?: boolean;
  /** The bearer token (default: a random one); a fleet's tiers share one. */
  token?: string;
}

export class Gateway {
  readonly token: string;
  readonly outputPath: string;
  readonly logPath: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private env: Record<string, string> = {};
  httpEndpoint = '';
  grpcEndpoint = '';
  private healthEndpoint = '';

  constructor(private readonly options: GatewayOptions) {
    this.token = options.token ?? randomBytes(16).toString('hex');
    mkdirSync(options.dir, { recursive: true });
    this.outputPath = join(options.dir, 'output.jsonl');
    this.logPath = join(options.dir, 'collector.log');
  }

  get url(): string {
    return `http://${this.httpEndpoint}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Starts the collector (again, on the same ports and files after a stop) and waits until it is healthy.
   * The overlay's file exporters append: a restart adds to what the earlier run wrote.
   */
  async start(): Promise<void> {
    if (!this.httpEndpoint) {
      this.httpEndpoint = `127.0.0.1:${await freePort()}`;
      this.healthEndpoint = `127.0.0.1:${await freePort()}`;
      this.env = {
        CCOTEL_GATEWAY_TOKEN: this.token,
        CCOTEL_GATEWAY_HTTP_ENDPOINT: this.httpEndpoint,
        CCOTEL_GATEWAY_GRPC_ENDPOINT: (this.grpcEndpoint = `127.0.0.1:${await freePort()}`),
        CCOTEL_HEALTH_ENDPOINT: this.healthEndpoint,
        CCOTEL_METRICS_PORT: String(await freePort()),
        CCOTEL_STORAGE_DIR: join(this.options.dir, 'storage'),
        CCOTEL_FILE_EXPORT_PATH: this.outputPath,
        ...(this.options.clickhouseEndpoint ? { CCOTEL_CLICKHOUSE_ENDPOINT: this.options.clickhouseEndpoint } : {}),
        CCOTEL_MEMORY_LIMIT_MIB: '512',
        CCOTEL_MEMORY_SPIKE_MIB: '100',
        CCOTEL_TRACE_SAMPLE_PERCENT: '100',
        CCOTEL_TAIL_ROOT_WAIT: '1s',
        CCOTEL_TAIL_DECISION_WAIT: '3s',
        ...this.options.env,
      };
    }
    const log = openSync(this.logPath, 'a');
    const child = spawn(
      requireCollectorBinary(),
      [
        this.options.config ?? join(collectorConfigDir, 'gateway.yaml'),
        ...(this.options.clickhouseEndpoint || this.options.noFileExport ? [] : [this.options.overlay ?? join(collectorConfigDir, 'test-overlay-file.yaml')]),
        ...(this.options.extraConfigs ?? []),
      ].flatMap((file) => ['--config', file]),
      { env: { PATH: process.env.PATH ?? '', HOME: this.options.dir, ...this.env }, stdio: ['ignore', log, log] },
    );
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`collector exited (${child.exitCode}) at start:\n${this.logTail()}`);
      if (await this.healthy()) return;
      if (Date.now() > deadline) throw new Error(`collector not healthy after 30 s:\n${this.logTail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** SIGTERM (graceful: the collector drains and flushes) or SIGKILL; resolves once the process is gone. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await this.exited;
    this.child = undefined;
  }

  private async healthy(): Promise<boolean> {
    try {
      const response = await fetch(`http://${this.healthEndpoint}/`, { signal: AbortSignal.timeout(1000) });
      return response.ok;
    } catch {
      return false;
    }
  }

  logTail(): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8').split('\n').slice(-30).join('\n') : '';
  }

  /** The log's warnings and errors (the last 30), for failure messages. */
  logProblems(): string {
    const lines = existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8').split('\n') : [];
    return lines.filter((line) => /\t(warn|error)\t|retry/i.test(line)).slice(-30).join('\n');
  }

  /** The output files: logs and metrics, then traces. */
  outputParts(): string[] {
    return exportFiles(this.outputPath).filter((file) => existsSync(file));
  }

  /** Every OTLP/JSON line (one export each) of every run; a line the collector had not finished is left out. */
  outputLines(): unknown[] {
    return this.outputParts().flatMap((path) => {
      const lines = readFileSync(path, 'utf8').split('\n');
      lines.pop(); // after the last newline: empty, or an unfinished line
      return lines.filter(Boolean).map((line) => JSON.parse(line) as unknown);
    });
  }

  outputText(): string {
    return this.outputParts().map((path) => readFileSync(path, 'utf8')).join('');
  }
}
