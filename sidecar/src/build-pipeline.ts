// The one place the sidecar's pipeline is assembled, for `run` and `backfill` alike: the transcript correlator,
// the joins in their order, the processors, the sinks, and the sources that feed the joins. The two commands
// differ only by the mode, and only in this:
//   follow (`run`): the hook spool and the shell logs are watched and handed over as they grow; the transcripts are
//     followed by the tailer from their checkpoints; /proc is scanned for the detectors. The driver (driver.ts)
//     delivers what they emit (when a batch is full, or its oldest item is a flush interval old), and its tick runs
//     the idle work (idle-clock.ts) and writes the status; the sources commit what their acks tell. Started and
//     stopped as a whole.
//   once (`backfill`): the spool and the shell logs are read whole first (their events wait in the correlators for
//     the spans the transcripts produce), then the caller reads every transcript from its start (ingestFile), and
//     the end of input closes everything still open.
import { join } from 'node:path';
import type { Config } from './config.js';
import { Driver } from './driver.js';
import { historyHeapBudget } from './heap-budget.js';
import { closeIdleSessions, scheduleIdleWork } from './idle-clock.js';
import { batchSize, isTextMasker, type Processor, type Sink } from './model.js';
import { FLUSH_ITEMS, Pipeline } from './pipeline.js';
import { Places } from './processors/attribution.js';
import { CapProcessor } from './processors/cap.js';
import { NoContentProcessor } from './processors/content-level.js';
import { HookCorrelator } from './processors/correlate-hooks.js';
import type { Hook } from './processors/hook-input.js';
import { SettingsJoin } from './processors/correlate-settings.js';
import { ShellCorrelator } from './processors/correlate-shell.js';
import { FailureModeDetector } from './processors/detectors/index.js';
import { loadOrCreateInstallationKey } from './processors/installation-key.js';
import { fingerprintOf, MaskProcessor } from './processors/mask.js';
import { NativeJoin } from './processors/native-join.js';
import { GAP_SETTLE_MS, TelemetryGapDetector } from './processors/detectors/telemetry-gap.js';
import { PriceChatsProcessor } from './processors/price-chats.js';
import { createSecretDetector } from './processors/secret-detector.js';
import { SessionStateTracker } from './processors/session-state.js';
import { ClaimJournal } from './processors/transcripts/claim-journal.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import { CodexRollouts } from './sources/codex/rollouts.js';
import { sidecarResource, SIDECAR_VERSION } from './resource.js';
import { RowMapper } from './sinks/clickhouse-rows.js';
import { ClickHouseSink } from './sinks/clickhouse-sink.js';
import { createOtlpSink } from './sinks/create-otlp-sink.js';
import { InsightRefreshingSink } from './sinks/insight-refresh.js';
import type { CatchUp, CheckpointStore, SidecarStatus } from './sources/checkpoints.js';
import { HookSpoolSource } from './sources/hook-spool-source.js';
import { ProcessWatcher } from './sources/process-watcher.js';
import { SettingsWatcher } from './sources/settings-watcher.js';
import { ShellLogSource } from './sources/shell-log-source.js';
import { TranscriptTailer, type TailerOptions } from './sources/transcript-tailer.js';
import type { Store } from './store/open-store.js';
import { nativeDialects } from './sources/native-telemetry.js';

/**
 * The join of Claude Code's own request records to ccotel's chats first, and pricing (they read only ids, times
 * and token counts), then `watchers` (which read what goes by as it was made: the telemetry_gap detector). Masking before capping, always, so a cap can never cut a secret in half and leave its head
 * readable. `joinNative`: following, Claude Code's own telemetry comes (run's receiver) and is joined to ccotel's
 * chats and calls; reading once none comes, and the join would only remember the last 20 000 of each (12 MB alive
 * through a long backfill, BENCHMARKS.md issue 36 memory).
 */
export function buildProcessors(config: Config, installationKey?: Buffer, { watchers = [], joinNative = false }: { watchers?: Processor[]; joinNative?: boolean } = {}): Processor[] {
  const first = [...(joinNative ? [new NativeJoin(nativeDialects())] : []), new PriceChatsProcessor(), ...watchers];
  const cap = new CapProcessor(config.contentMaxLength);
  if (config.contentLevel === 'raw') return [...first, cap];
  const mask = new MaskProcessor(createSecretDetector(), installationKey ?? loadOrCreateInstallationKey(config.paths.keyPath));
  return config.contentLevel === 'none' ? [...first, new NoContentProcessor(), mask, cap] : [...first, mask, cap];
}

/** A writing command needs a store or an OTLP endpoint (`--store none` without `--otlp` writes nowhere). */
export function requireDestination(config: Config): void {
  if (config.store === '' && config.otlpEndpoint === '') throw new Error('nothing to write to: give a --store or an --otlp endpoint');
}

/** Sinks besides the store: the OTLP exporter when an endpoint is configured. Close them when done. */
export async function exportSinks(config: Config): Promise<Sink[]> {
  return config.otlpEndpoint ? [await createOtlpSink(config)] : [];
}

interface CommonSetup {
  /** Claude Code's config dirs (each one's settings.json is the user's settings); none: no user settings. */
  configDirs?: string[];
  /** The store to write to (none: only `sinks`). */
  store?: Store;
  /** Sinks besides the store (the OTLP exporter). */
  sinks?: Sink[];
  log?: (message: string) => void;
}

export interface OnceSetup extends CommonSetup {
  mode: 'once';
  /** Read the hook spool without deleting the delivered events. */
  keepSpool?: boolean;
}

export interface FollowSetup extends CommonSetup {
  mode: 'follow';
  /** The projects dirs to follow (those missing are followed once they appear). */
  roots: string[];
  /** Where read positions are committed (transcripts, and the shell log beside them). */
  checkpoints: CheckpointStore;
  /** Poll files instead of using inotify. */
  polling?: boolean;
  /** Write the sidecar's status beside the checkpoints (`ccotel status`), naming the destination so. */
  status?: Pick<SidecarStatus, 'store' | 'otlpEndpoint'>;
  /** The receiver of Claude Code's own telemetry, for the status, once there is one. */
  nativeTelemetry?: () => SidecarStatus['nativeTelemetry'];
  /** Steer the V8 heap as a backfill does while the history since the last run is read (heap-budget.ts). */
  steerHeap?: (budgetBytes: number) => () => void;
}

export interface BuiltPipeline {
  pipeline: Pipeline;
  storeSink?: ClickHouseSink;
  /** Following: the store sink that refreshes what `report insights` reads for the sessions it stores. */
  insightRefresh?: InsightRefreshingSink;
  /** Hook events (from the spool source) are joined onto the transcript traces here. */
  hooks: HookCorrelator;
  /** Shell-log commands (from the shell log source) become shell spans under their Bash tool span here. */
  shell: ShellCorrelator;
  /** Failure modes: fed by the telemetry, the hooks and (following) the process watcher's scans. */
  detector: FailureModeDetector;
  /** Following: telemetry_gap, from Claude Code's own telemetry and ccotel's chats as they are delivered. */
  telemetryGaps?: TelemetryGapDetector;
  /** The pipeline's masking for text kept outside telemetry (dead-letter files); as is at content level raw. */
  maskText: (text: string) => Promise<string>;
  spool: HookSpoolSource;
  shellLog: ShellLogSource;
  /** Claude Code's settings files: their changes, and the rules in force at each turn. */
  settings: SettingsWatcher;
}

export interface OncePipeline extends BuiltPipeline {
  /** Take in the hook spool and the shell logs whole; call before reading the transcripts. */
  readSideInputs(): Promise<void>;
}

export interface FollowPipeline extends BuiltPipeline {
  tailer: TranscriptTailer;
  /** Decides when what the sources emitted is delivered, and retries while a sink fails. */
  driver: Driver;
  processes: ProcessWatcher;
  /** Start every source; resolves once the transcripts are followed (their catch-up goes on in the background). */
  start(): Promise<void>;
  /** Stop every source: what was read is delivered and committed; open turns stay open for the next start. */
  stop(): Promise<void>;
}

export function buildPipeline(config: Config, setup: OnceSetup): OncePipeline;
export function buildPipeline(config: Config, setup: FollowSetup): FollowPipeline;
export function buildPipeline(config: Config, setup: OnceSetup | FollowSetup): OncePipeline | FollowPipeline {
  const built = assemble(config, setup);
  return setup.mode === 'follow' ? following(built, config, setup) : readingOnce(built);
}

/** Hooks that say the agent stopped answering: its turn is over once its rows agree. */
const AGENT_STOP_HOOKS = new Set(['Stop', 'SessionEnd']);

/** The stages, and the sources of hook events and shell logs set for the mode. */
function assemble(config: Config, setup: OnceSetup | FollowSetup): BuiltPipeline {
  const { store, log } = setup;
  const storeSink = store ? new ClickHouseSink(store.writers, new RowMapper(sidecarResource(config.contentLevel), SIDECAR_VERSION), store.database,
    store.kind === 'embedded' ? { singleWriter: true, rawWindowDays: config.rawTtlDays } : {}) : undefined;
  // Following, the sessions stored are refreshed for `report insights` as they come; reading once, at the end.
  const insightRefresh = store && storeSink && setup.mode === 'follow' ? new InsightRefreshingSink(storeSink, store.client, store.database, log) : undefined;
  const sinks = [...(insightRefresh ? [insightRefresh] : storeSink ? [storeSink] : []), ...(setup.sinks ?? [])];
  const detector = new FailureModeDetector({ idleMs: config.idleMs });
  const sessionState = new SessionStateTracker();
  // Reading once, the hook spool and the shell log are read before the transcripts (readSideInputs).
  const follow = setup.mode === 'follow';
  // Following, an agent's Stop or SessionEnd hook ends its turn as soon as the rows say it is over (reading once,
  // the spool is read before the transcripts: the next prompt or the end of input ends it there).
  const stopped = (hook: Hook) => {
    if (AGENT_STOP_HOOKS.has(hook.name)) pipeline.agentStopped(hook.sessionId, hook.timeMs);
  };
  const hooks = new HookCorrelator({ contentLevel: config.contentLevel, listeners: follow ? [detector.onHook, stopped] : [detector.onHook], lateHooks: follow, dialects: nativeDialects() });
  const shell = new ShellCorrelator({ lateRecords: follow });
  const installationKey = loadOrCreateInstallationKey(config.paths.keyPath);
  const settings = new SettingsWatcher({
    configDirs: setup.configDirs ?? [],
    managedDir: config.managedSettingsDir,
    digest: (value) => fingerprintOf(value, installationKey),
    emit: (change, ack) => {
      settingsJoin.add(change, ack);
      pipeline.noteInput();
    },
    intervalMs: SETTINGS_POLL_MS,
    log,
    ...(follow ? { statePath: join(config.paths.checkpointDir, `settings-${setup.checkpoints.key}.json`), stateWrites: setup.checkpoints.writes } : {}),
  });
  const settingsJoin = new SettingsJoin(settings);
  // The pipeline runs each join after those publishing the events it consumes (join-chain.ts).
  const joins = [hooks, shell, detector, sessionState, settingsJoin];
  // Sessions begun from now on (reading once, Claude Code's own telemetry is not received). Quiet for the idle time, a
  // session's open turn is closed (its last chats go out), then for as long again (at most GAP_SETTLE_MS) Claude
  // Code's last exports may still come.
  const telemetryGaps = follow ? new TelemetryGapDetector(nativeDialects(), Date.now(), Math.max(1_000, config.idleMs + Math.min(GAP_SETTLE_MS, config.idleMs))) : undefined;
  const processors = buildProcessors(config, installationKey, { watchers: telemetryGaps ? [telemetryGaps] : [], joinNative: follow });
  const mask = processors.find(isTextMasker);
  const maskText = (text: string) => (mask ? mask.maskString(text) : Promise.resolve(text));
  // Every agent's source tells the same correlation events (DESIGN §12); Claude Code's is the transcript correlator.
  // Following, the correlator's claims are kept beside the checkpoints, written before each of them.
  const claims = follow ? new ClaimJournal(join(config.paths.checkpointDir, `claims-${setup.checkpoints.key}.log`), setup.checkpoints.writes) : new ClaimJournal();
  if (follow) setup.checkpoints.beforeSave = () => claims.flush();
  const pipeline = new Pipeline(new TranscriptCorrelator(new Places({ ticketPattern: config.ticketPattern }), claims), processors, sinks, joins, { codex: new CodexRollouts() });
  const spool = new HookSpoolSource({
    ...config.paths,
    pipeline,
    maskText,
    emit: (event, ack) => {
      hooks.add({ ...event, ack });
      pipeline.noteInput();
    },
    log,
    ...(follow ? {} : { consume: !setup.keepSpool }),
  });
  const shellLog = new ShellLogSource({
    dir: config.paths.shellLogDir,
    emit: (read, ack) => {
      shell.addRecords(read, ack);
      pipeline.noteInput();
    },
    skipRecord: (record) => pipeline.skipRecord(record),
    log,
    ...(follow ? { checkpointPath: join(config.paths.checkpointDir, `shell-${setup.checkpoints.key}.json`), stateWrites: setup.checkpoints.writes } : {}),
  });
  return { pipeline, storeSink, insightRefresh, hooks, shell, detector, telemetryGaps, maskText, spool, shellLog, settings };
}

function readingOnce(built: BuiltPipeline): OncePipeline {
  const { spool, shellLog, settings } = built;
  return {
    ...built,
    readSideInputs: async () => {
      spool.scan();
      await shellLog.readAll();
      await settings.readAll();
    },
  };
}

const STATUS_EVERY_MS = 5_000;
/** How often the settings files are looked at (a stat each): a change is recorded within about a second. */
const SETTINGS_POLL_MS = 500;
/** How often sessions are looked at for a telemetry_gap (a settled one is compared once per change). */
const GAP_CHECK_MS = 5_000;
/**
 * How often the catch-up is looked at until it is done (a look counts the files left). "Done" takes two looks after the
 * last file, with a delivery between: at a second each, `report` warned of a catch-up for ~2 s after any start.
 */
const CATCH_UP_CHECK_MS = 200;

/**
 * Paths and errors (which name the path) as the status file keeps them: masked like telemetry, since a transcript's
 * directory is named after a working directory, which can hold a secret.
 */
async function maskedEntries(entries: Map<string, string>, maskText: (text: string) => Promise<string>): Promise<Record<string, string>> {
  const masked: Record<string, string> = {};
  for (const [path, error] of entries) masked[await maskText(path)] = await maskText(error);
  return masked;
}

/** The sources that are retrying, for the status. */
function retryingSources(states: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(states).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

export interface DrivenTranscripts {
  tailer: TranscriptTailer;
  driver: Driver;
  /** Follow the transcripts (resolves once they are followed; the catch-up goes on) and start delivering. */
  start(): Promise<void>;
  /** Stop reading, close the turns that are over, deliver what was read, commit what its acks told. */
  stop(): Promise<void>;
}

/**
 * The transcript tailer of `pipeline` and the driver that delivers what it reads, closing idle sessions between
 * its reads (and giving up on what `giveUp` holds for its span): how `run` follows transcripts, and tests too.
 */
export function driveTranscripts(
  pipeline: Pipeline,
  options: Omit<TailerOptions, 'consumer' | 'onTick'> & { idleMs: number; flushIntervalMs: number; giveUp?: ((beforeMs: number) => void)[] },
): DrivenTranscripts {
  const { idleMs, flushIntervalMs, giveUp = [], ...tailing } = options;
  const tailer = new TranscriptTailer({ ...tailing, consumer: pipeline, onTick: closeIdleSessions(pipeline, idleMs) });
  const driver = new Driver({ target: pipeline, maxItems: FLUSH_ITEMS, intervalMs: flushIntervalMs, log: options.log });
  pipeline.onFull = () => driver.makeRoom();
  pipeline.onInput = () => driver.emitted();
  scheduleIdleWork(driver, idleMs, giveUp, tailer);
  return {
    tailer,
    driver,
    start: async () => {
      await tailer.start();
      driver.start();
    },
    stop: async () => {
      await tailer.stop();
      pipeline.closeComplete();
      await driver.stop();
      tailer.commit();
    },
  };
}

function following(built: BuiltPipeline, config: Config, setup: FollowSetup): FollowPipeline {
  const { pipeline, spool, shellLog, detector, hooks, shell } = built;
  const { log } = setup;
  const giveUp = [hooks, shell].map((join) => (beforeMs: number) => {
    join.expire(beforeMs);
    pipeline.noteInput();
  });
  const transcripts = driveTranscripts(pipeline, { roots: setup.roots, checkpoints: setup.checkpoints, idleMs: config.idleMs, flushIntervalMs: config.flushIntervalMs, giveUp, usePolling: setup.polling, log, beforeRead: () => spool.scan() });
  // Each scan reads all of /proc: every scan_interval_ms, and soon after the events that make a detection due.
  const processes = new ProcessWatcher({
    intervalMs: config.scanIntervalMs,
    onScan: async (scan) => {
      detector.onScan(scan);
      pipeline.noteInput();
    },
    sessionsToName: () => detector.sessionsWithoutAgent(),
    log,
  });
  detector.requestScan = (delayMs) => processes.scanIn(delayMs);
  const { tailer, driver } = transcripts;
  const startedMs = Date.now();
  // The catch-up on the history since the last run. Once every file is read, the turns of sessions idle for long are
  // closed at once, not at the next idle tick (up to a minute later, while the figures lack them); then `run` says
  // when all of it is stored.
  let catchUp: CatchUp = { done: false, filesLeft: 0, bytesLeft: 0, openSessions: 0, recordsPending: 0 };
  let idleClosed = false;
  // The catch-up reads like a backfill, and V8 would let the heap grow to 4× what it keeps alive meanwhile.
  let steering = setup.steerHeap?.(historyHeapBudget(setup.store));
  const releaseHeap = () => {
    steering?.();
    steering = undefined;
  };
  const followCatchUp = () => {
    if (catchUp.done) return;
    const behind = tailer.behind;
    catchUp = { done: false, filesLeft: behind.files, bytesLeft: behind.bytes, openSessions: pipeline.sessionCounts().open, recordsPending: pipeline.pendingItems() };
    if (behind.files > 0) return;
    if (!idleClosed) {
      idleClosed = true;
      tailer.tick();
      return;
    }
    if (catchUp.recordsPending > 0 || !tailer.settled) return;
    catchUp = { ...catchUp, done: true };
    releaseHeap();
    log?.(`caught up: ${tailer.filesFollowed} files read and every record of them stored (${catchUp.openSessions} sessions still open)`);
    void writeStatus();
  };
  const writeStatus = async (stopped = false) => {
    if (!setup.status) return;
    const unreadableFiles = await maskedEntries(pipeline.stats.unreadableFiles, built.maskText);
    setup.checkpoints.saveStatus({
      ...setup.status,
      pid: process.pid,
      startedMs,
      updatedMs: Date.now(),
      roots: setup.roots,
      watcher: tailer.watcherMode,
      sink: { ...driver.sink, ...(stopped ? { state: 'stopped' as const } : {}) },
      filesFollowed: tailer.filesFollowed,
      ...tailer.commits,
      retrying: retryingSources({ transcripts: tailer.retrying, 'hook spool': spool.retrying, 'shell log': shellLog.retrying, 'process scan': processes.retrying }),
      unreadableFiles,
      linesSkipped: pipeline.stats.skipped as Record<string, number>,
      catchUp,
      nativeTelemetry: setup.nativeTelemetry?.(),
    });
  };
  driver.every(STATUS_EVERY_MS, () => void writeStatus());
  driver.every(CATCH_UP_CHECK_MS, followCatchUp);
  driver.every(GAP_CHECK_MS, () => {
    const found = built.telemetryGaps?.check();
    if (found && batchSize(found) > 0) pipeline.add(found);
  });
  return {
    ...built,
    tailer,
    driver,
    processes,
    start: async () => {
      spool.start();
      shellLog.start();
      await built.settings.start();
      processes.start();
      await transcripts.start();
      await writeStatus();
    },
    stop: async () => {
      await processes.stop();
      await built.settings.stop();
      await spool.stop();
      await shellLog.stop();
      await transcripts.stop();
      await built.insightRefresh?.close();
      releaseHeap();
      await writeStatus(true);
    },
  };
}
