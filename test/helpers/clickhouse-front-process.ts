// FOR TESTS ONLY: the ClickHouse HTTP front (clickhouse-http-front.ts) as a child process that a test or
// deploy/local-fleet.ts can stop and start again on the same port and data directory (a ClickHouse outage).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from './free-port.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const CLI = join(repoRoot, 'test', 'helpers', 'clickhouse-http-front-cli.ts');
const VITE_NODE = join(repoRoot, 'node_modules', '.bin', 'vite-node');

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class ClickHouseFrontProcess {
  private child: ChildProcess | undefined;
  private port = 0;

  constructor(
    private readonly dataDir: string,
    private readonly logPath = join(dataDir, '..', 'clickhouse-front.log'),
  ) {}

  /** The URL the exporter and `ccotel report --store` use; the same after a restart. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(timeoutMs = 120_000): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const log = createWriteStream(this.logPath, { flags: 'a' });
    const child = spawn(VITE_NODE, [CLI, '--', '--data', this.dataDir, '--port', String(this.port)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    child.once('exit', () => running.delete(child));
    child.stderr?.pipe(log);
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`ClickHouse front not listening after ${timeoutMs} ms (log: ${this.logPath})`)), timeoutMs);
      child.stdout?.setEncoding('utf8').on('data', (text: string) => {
        log.write(text);
        if (text.includes('listening ')) {
          clearTimeout(timer);
          ready();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        fail(new Error(`ClickHouse front exited (${code ?? signal}) before listening (log: ${this.logPath})`));
      });
    });
  }

  /** SIGTERM (closes the engine cleanly) or SIGKILL (a crash); resolves once the process is gone. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill(signal);
    await exited;
  }
}
