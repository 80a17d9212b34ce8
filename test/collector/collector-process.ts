// Runs the real ccotel collector as a child process on free loopback ports, for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';
import { collectorConfigDir, requireCollectorBinary } from './binary.js';

export interface CollectorPorts {
  grpc: number;
  http: number;
  health: number;
  metrics: number;
}

export interface RunningCollector {
  pid: number;
  ports: CollectorPorts;
  /** What the collector has logged so far (stderr), for failure messages. */
  log(): string;
  /**
   * SIGTERM (a clean shutdown that drains what it can), SIGKILL if still alive after `graceMs` (10 s): says which
   * ended it, so a test of what a clean shutdown keeps can tell a slow shutdown from a lost one.
   */
  stop(graceMs?: number): Promise<'exited' | 'killed'>;
  /** SIGKILL: a crash, nothing drained. */
  kill(): Promise<void>;
}

export interface StartOptions {
  /** File names in collector-config/ or absolute paths, merged in order. */
  configs: string[];
  /** Variables the configs read; the port variables are filled in by startCollector. */
  env: Record<string, string>;
  /** How long to wait for the health check to report ready. */
  readyTimeoutMs?: number;
}

const running = new Set<ChildProcess>();
// A test runner that dies between start and stop must not leave collectors behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The environment for the child: ours without any CCOTEL_* setting, so only `env` configures it. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CCOTEL_')));
  return { ...inherited, ...extra };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function waitReady(child: ChildProcess, healthPort: number, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`collector exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${log()}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${healthPort}/`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`collector not ready within ${timeoutMs} ms:\n${log()}`);
}

/** Starts the collector on fresh ports; again on others when one was taken between choosing and binding. */
export async function startCollector(options: StartOptions): Promise<RunningCollector> {
  for (let attempt = 1; ; attempt++) {
    const ports: CollectorPorts = { grpc: await freePort(), http: await freePort(), health: await freePort(), metrics: await freePort() };
    try {
      return await startOn(ports, options);
    } catch (error) {
      if (attempt === 3 || !String(error).includes('address already in use')) throw error;
    }
  }
}

async function startOn(ports: CollectorPorts, options: StartOptions): Promise<RunningCollector> {
  const binary = requireCollectorBinary();
  // Each config reads only the names it knows (gateway and scale-out: GATEWAY_*, agent: AGENT_*).
  const portEnv = {
    CCOTEL_GATEWAY_GRPC_ENDPOINT: `127.0.0.1:${ports.grpc}`,
    CCOTEL_GATEWAY_HTTP_ENDPOINT: `127.0.0.1:${ports.http}`,
    CCOTEL_AGENT_GRPC_ENDPOINT: `127.0.0.1:${ports.grpc}`,
    CCOTEL_AGENT_HTTP_ENDPOINT: `127.0.0.1:${ports.http}`,
    CCOTEL_HEALTH_ENDPOINT: `127.0.0.1:${ports.health}`,
    CCOTEL_METRICS_HOST: '127.0.0.1',
    CCOTEL_METRICS_PORT: String(ports.metrics),
  };
  const args = options.configs.flatMap((config) => ['--config', config.startsWith('/') ? config : join(collectorConfigDir, config)]);
  const child = spawn(binary, args, { env: childEnv({ ...portEnv, ...options.env }), stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const log = () => stderr;
  if (child.pid === undefined) throw new Error(`could not start ${binary}`);
  const pid = child.pid;

  const signal = async (name: NodeJS.Signals, graceMs: number): Promise<'exited' | 'killed'> => {
    if (child.exitCode !== null || child.signalCode !== null) return 'exited';
    let killed = name === 'SIGKILL';
    child.kill(name);
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, graceMs);
    await exited(child);
    clearTimeout(timer);
    return killed ? 'killed' : 'exited';
  };
  const collector: RunningCollector = {
    pid,
    ports,
    log,
    stop: (graceMs = 10_000) => signal('SIGTERM', graceMs),
    kill: async () => {
      await signal('SIGKILL', 0);
    },
  };
  try {
    await waitReady(child, ports.health, options.readyTimeoutMs ?? 20_000, log);
  } catch (error) {
    await collector.kill();
    throw error;
  }
  return collector;
}
