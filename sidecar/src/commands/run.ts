// `ccotel run`: the live sidecar. Catches up on every transcript from its checkpoint, then follows them;
// while it owns an embedded store it serves `report` and `query` on a loopback endpoint. Ctrl-C (SIGINT)
// or SIGTERM stops it cleanly: deliver, commit, close the store, exit 0.
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DEFAULTS, loadConfig, type Config } from '../config.js';
import { buildPipeline, exportSinks, requireDestination } from '../build-pipeline.js';
import type { Sink } from '../model.js';
import type { Pipeline } from '../pipeline.js';
import { CheckpointStore, sinkKey } from '../sources/checkpoints.js';
import { retrying, type BackoffPolicy } from '../retry.js';
import { keepHeapNear } from '../heap-budget.js';
import { ensureStateDirs } from '../secure-dir.js';
import { StateWrites } from '../sources/state-file.js';
import type { HookSpoolSource } from '../sources/hook-spool-source.js';
import type { ShellLogSource } from '../sources/shell-log-source.js';
import type { TranscriptTailer } from '../sources/transcript-tailer.js';
import { codexRoot } from '../sources/codex/rollout-tree.js';
import { candidateRoots } from '../sources/transcript-discovery.js';
import { isServerUrl, openStore, readLock, StoreBusyError, type Store } from '../store/open-store.js';
import { serveStore, type QueryEndpoint } from '../store/query-endpoint.js';
import type { UiServer } from '../ui/server.js';
import { startTelemetryReceiver, type TelemetryReceiver } from '../sources/otlp-receiver.js';
import { isLoopback, loadReceiverToken, parseListen, type ListenAddress } from '../sources/receiver-access.js';
import { DEFAULT_READER_LIMITS } from '../store/reader.js';
import { readerSessions } from '../store/threadpool.js';
import { codexHomeOption, exportOption, portOption, storeOption, type GlobalOptions } from './options.js';

export interface RunOptions extends GlobalOptions {
  otlp?: string;
  idleMs?: number;
  scanIntervalMs?: number;
  polling?: boolean;
  telemetryPort?: number;
  listen?: string;
  tokenFile?: string;
  codexHome?: string;
}

export interface RunningSidecar {
  config: Config;
  tailer: TranscriptTailer;
  spool: HookSpoolSource;
  shellLog: ShellLogSource;
  store?: Store;
  endpoint?: QueryEndpoint;
  /** Claude Code's own OTLP, received (none when the port is 0 or was taken). */
  receiver?: TelemetryReceiver;
  checkpoints: CheckpointStore;
  stop(): Promise<void>;
}

/** Short, like the tailer's retries: a run waiting for a backfill should start soon after it ends. */
const STORE_RETRY: BackoffPolicy = { firstMs: 500, maxMs: 5_000 };

/** Start following; resolves once the sidecar is up (the catch-up continues in the background). */
export async function startSidecar(options: RunOptions, log: (message: string) => void = () => {}, signal?: AbortSignal): Promise<RunningSidecar> {
  const config = loadConfig({
    store: options.store,
    otlp: options.otlp,
    contentLevel: options.contentLevel,
    ticketPattern: options.ticketPattern,
    idleMs: options.idleMs,
    scanIntervalMs: options.scanIntervalMs,
    nativeTelemetryPort: options.telemetryPort,
    receiverListen: options.listen,
    receiverTokenFile: options.tokenFile,
    codexHome: options.codexHome,
  });
  requireDestination(config);
  const access = receiverAccess(config);
  ensureStateDirs(config.paths);
  const store = config.store === '' ? undefined : await openStoreWhenAvailable(config, log, signal);
  let endpoint: QueryEndpoint | undefined;
  let extraSinks: Sink[] = [];
  try {
    if (store?.kind === 'embedded') endpoint = await serveStore(store, 'run');
    extraSinks = await exportSinks(config);
    const checkpoints = new CheckpointStore(config.paths.checkpointDir, sinkKey([storeIdentity(config.store), config.otlpEndpoint]), new StateWrites(log));
    // Roots that do not exist yet are followed once they appear (a host where Claude Code has not run yet).
    const roots = [...candidateRoots(), codexRoot(config.codexHome)];
    const missing = roots.filter((root) => !existsSync(root));
    if (missing.length > 0) log(`not there yet, followed once they appear: ${missing.join(', ')}`);
    const status = { store: storeIdentity(config.store), otlpEndpoint: config.otlpEndpoint };
    // Started once the pipeline is: the status asks for it meanwhile.
    const started: { receiver?: TelemetryReceiver } = {};
    const nativeTelemetry = () => started.receiver && { url: started.receiver.url, ...started.receiver.stats };
    const built = buildPipeline(config, { mode: 'follow', store, sinks: extraSinks, roots, configDirs: candidateRoots().map((root) => dirname(root)), checkpoints, polling: options.polling, log, status, nativeTelemetry, steerHeap: keepHeapNear });
    const { tailer, spool, shellLog } = built;
    await built.start();
    const receiver = (started.receiver = await receiveNativeTelemetry(access, built.pipeline, log));
    return {
      config,
      tailer,
      spool,
      shellLog,
      store,
      endpoint,
      receiver,
      checkpoints,
      stop: async () => {
        // First: what is received after the pipeline stopped could not be stored.
        await receiver?.close();
        await built.stop();
        for (const sink of extraSinks) await sink.close();
        await endpoint?.close();
        await store?.close();
      },
    };
  } catch (error) {
    for (const sink of extraSinks) await sink.close();
    await endpoint?.close();
    await store?.close();
    throw error;
  }
}

interface ReceiverAccess {
  /** Undefined: no receiver (native_telemetry_port 0 and no --listen). */
  address?: ListenAddress;
  token?: string;
  /** Given with --listen (receiver_listen): not being able to listen there is an error, not a log line. */
  explicit: boolean;
}

/** Where the receiver listens, and its token; refused (before anything starts) beyond loopback without a token. */
function receiverAccess(config: Config): ReceiverAccess {
  const token = loadReceiverToken(config.receiverTokenFile, process.env);
  if (config.receiverListen !== '') {
    const address = parseListen(config.receiverListen);
    if (!isLoopback(address.host) && token === undefined) {
      throw new Error(`--listen ${config.receiverListen} is beyond loopback: give the receiver a token (--token-file, receiver_token_file or CCOTEL_RECEIVER_TOKEN), which senders send as Authorization: Bearer <token>`);
    }
    return { address, token, explicit: true };
  }
  return { address: config.nativeTelemetryPort === 0 ? undefined : { host: '127.0.0.1', port: config.nativeTelemetryPort }, token, explicit: false };
}

/**
 * The receiver of Claude Code's own OTLP (and, on --listen, other hosts' sidecars'), delivering through the pipeline's
 * processors and sinks. A loopback port another process holds (a second `run`, a Collector) is logged, and the sidecar
 * goes on following transcripts without it.
 */
async function receiveNativeTelemetry(access: ReceiverAccess, pipeline: Pipeline, log: (message: string) => void): Promise<TelemetryReceiver | undefined> {
  if (!access.address) return undefined;
  try {
    return await startTelemetryReceiver({ ...access.address, token: access.token, deliver: (batch) => pipeline.deliver(batch), log });
  } catch (error) {
    const why = `${access.address.host}:${access.address.port} is not available (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    if (access.explicit) throw new Error(`cannot receive on ${why}`);
    log(`not receiving Claude Code's own telemetry: ${why}`);
    return undefined;
  }
}

/** The store as checkpoints and status name it: a resolved directory, or a URL without its credentials. */
function storeIdentity(target: string): string {
  if (target === '') return '';
  if (!isServerUrl(target)) return resolve(target);
  const url = new URL(target);
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Open the store for writing. Another `run` holding it is an error; a store busy with a one-off command
 * (backfill) or a server that does not answer yet is waited for, so nothing is lost meanwhile.
 */
async function openStoreWhenAvailable(config: Config, log: (message: string) => void, signal?: AbortSignal): Promise<Store> {
  const store = await retrying(() => openStore(config.store, { command: 'run', access: 'write', rawTtlDays: config.rawTtlDays, summaryTtlDays: config.summaryTtlDays }), {
    policy: STORE_RETRY,
    signal,
    onFailure: (error, delayMs) => {
      if (error instanceof StoreBusyError && readLock(resolve(config.store))?.command === 'run') throw error;
      log(`store not available (${error.message}); retrying in ${Math.round(delayMs / 1000)} s`);
    },
  });
  if (store.created) log(`created a new store at ${store.target}`);
  return store;
}

/**
 * The last resort for errors nothing caught. A rejected promise is an operation that has ended, and an
 * error with a syscall is an I/O failure (a full disk, no descriptor left): both are logged and the
 * sidecar goes on. Anything else is a bug that may have left state half-changed: logged, then a clean stop.
 */
export function keepRunningOnStrayErrors(log: (message: string) => void, stop: () => void): void {
  process.on('unhandledRejection', (reason) => log(`unhandled rejection, kept running: ${(reason as Error)?.stack ?? String(reason)}`));
  process.on('uncaughtException', (error) => {
    if ((error as NodeJS.ErrnoException).syscall) {
      log(`uncaught I/O error, kept running: ${error.message}`);
      return;
    }
    log(`uncaught error, stopping: ${error.stack ?? error.message}`);
    process.exitCode = 1;
    stop();
  });
}

export function registerRunCommand(program: Command): void {
  codexHomeOption(exportOption(storeOption(
    program
      .command('run')
      .description('Follow Claude Code transcripts and Codex rollouts live into the store (and/or a collector); Ctrl-C stops cleanly')
      .option('--idle <ms>', `close the open turn of a session with no record for this long (default ${DEFAULTS.idleMs})`, (value) => Number(value))
      .option('--scan-interval <ms>', `read the process table this often for the failure-mode detectors (default ${DEFAULTS.scanIntervalMs})`, (value) => Number(value))
      .option('--polling', 'poll files instead of using inotify (network filesystems)')
      .option('--telemetry-port <n>', `receive Claude Code's own OTLP/HTTP on this loopback port, 0 for none (default ${DEFAULTS.nativeTelemetryPort})`, portOption)
      .option('--listen <host:port>', "receive OTLP/HTTP there instead (a team's receiver for other hosts' sidecars; beyond loopback it needs a token)")
      .option('--token-file <path>', 'file (mode 600) holding the token senders must give (Authorization: Bearer); or CCOTEL_RECEIVER_TOKEN')
      .option('--ui', 'also serve the web view (ccotel ui) of the store on 127.0.0.1')
      .option('--ui-port <n>', 'port of the web view (default: a random free port)', portOption),
  ))).action(async (opts: RunOptions & { idle?: number; scanInterval?: number; ui?: boolean; uiPort?: number }) => {
    const log = (message: string) => console.error(`ccotel run: ${message}`);
    const abort = new AbortController();
    let stopping: Promise<void> | undefined;
    let sidecar: RunningSidecar | undefined = undefined;
    let ui: UiServer | undefined;
    const stop = () => {
      abort.abort();
      if (!sidecar) process.exit(); // still waiting for the store: nothing read, nothing to deliver
      const running = sidecar;
      stopping ??= Promise.resolve(ui?.close()).then(() => running.stop()).then(() => {
        log('stopped');
        process.exit(); // 0, or 1 after an uncaught error
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    keepRunningOnStrayErrors(log, stop);
    sidecar = await startSidecar({ ...opts, idleMs: opts.idle, scanIntervalMs: opts.scanInterval }, log, abort.signal);
    // Named without credentials: a server URL may carry a password.
    const where = [sidecar.store ? `store ${storeIdentity(sidecar.config.store)}` : '', sidecar.config.otlpEndpoint ? `OTLP ${sidecar.config.otlpEndpoint}` : ''].filter(Boolean).join(' and ');
    const served = sidecar.endpoint ? `; queries served on ${sidecar.endpoint.url} (${readerSessions(DEFAULT_READER_LIMITS.maxConcurrentQueries)} at once)` : '';
    const received = sidecar.receiver ? `; Claude Code's own telemetry received on ${sidecar.receiver.url}` : '';
    log(`following transcripts into ${where}${served}${received}`);
    if (opts.ui) {
      if (!sidecar.store) throw new Error('--ui needs a store (it shows what the store holds): drop --store none');
      const { serveUiOf } = await import('./ui.js');
      ui = await serveUiOf(sidecar.store, opts.uiPort, log, sidecar.config.insights);
    }
  });
}
