// `ccotel ui`: the local web view (overview, sessions, a session's turns as a trace, failure modes) on
// 127.0.0.1, read through the same path as `report`: a running sidecar's endpoint, or the store itself
// (then served to `report` and `query` meanwhile, as `run` does). `--export FILE` writes one HTML file instead.
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { loadConfig, type InsightThresholds } from '../config.js';
import { openStore, type Store } from '../store/open-store.js';
import { serveStore } from '../store/query-endpoint.js';
import { statePaths } from '../paths.js';
import { LOGIN_LIFETIME_MS } from '../ui/auth.js';
import { exportHtml } from '../ui/export.js';
import { freshLoginUrl, recordUi } from '../ui/login-record.js';
import { startUiServer, type UiServer } from '../ui/server.js';
import { parseSince, portOption, storeOption, type GlobalOptions } from './options.js';

interface UiOptions extends GlobalOptions {
  port?: number;
  export?: string;
  since?: string;
  loginUrl?: boolean;
}

const LOGIN_NOTE = `the link logs one browser in, once, for ${LOGIN_LIFETIME_MS / 3_600_000} hours; ccotel ui --login-url prints another`;

/** How often a live page refreshes (CCOTEL_UI_REFRESH_MS; tests shorten it). */
const refreshMs = (): number | undefined => Number(process.env.CCOTEL_UI_REFRESH_MS) || undefined;

/** `run --ui`: the web view of the store the sidecar is writing. */
export async function serveUiOf(store: Store, port: number | undefined, log: (message: string) => void, insights?: InsightThresholds): Promise<UiServer> {
  const ui = await startUiServer({ client: store.client, database: store.database, port, live: true, store: store.target, refreshMs: refreshMs(), insights });
  const unrecord = recordUi(statePaths().stateDir, ui, log);
  log(`web view: open ${ui.loginUrl} (${LOGIN_NOTE})`);
  return { ...ui, close: () => ui.close().finally(unrecord) };
}

export function registerUiCommand(program: Command): void {
  storeOption(
    program
      .command('ui')
      .description('Serve the web view on 127.0.0.1 (cost, sessions, turn traces, failure modes, insights); prints a one-time login URL')
      .option('--port <n>', 'port to listen on (default: a random free port)', portOption)
      .option('--export <file>', 'write one self-contained HTML file of the overview and sessions instead of serving')
      .option('--since <when>', 'with --export: only this recent (e.g. 7d, or a date)')
      .option('--login-url', 'print a new one-time login URL of the web view already running (ccotel ui or run --ui), and exit'),
  ).action(async (opts: UiOptions) => {
    if (opts.loginUrl) {
      console.log(await freshLoginUrl(statePaths().stateDir));
      return;
    }
    const config = loadConfig({ store: opts.store });
    if (config.store === '') throw new Error('ccotel ui shows what a store holds: pass --store PATH|URL (not none)');
    const store = await openStore(config.store, { command: 'ui', access: 'read', rawTtlDays: config.rawTtlDays });
    if (opts.export) {
      try {
        writeFileSync(opts.export, await exportHtml(store, { fromMs: opts.since ? parseSince(opts.since) : undefined }));
        console.error(`ccotel ui: wrote ${opts.export}`);
      } finally {
        await store.close();
      }
      return;
    }
    const endpoint = store.kind === 'embedded' ? await serveStore(store, 'ui') : undefined;
    // Through a running sidecar (or a server the collector fills), the data changes while we look.
    const ui = await startUiServer({ client: store.client, database: store.database, port: opts.port, live: store.kind !== 'embedded', store: store.target, refreshMs: refreshMs(), insights: config.insights });
    const unrecord = recordUi(statePaths().stateDir, ui, (message) => console.error(`ccotel ui: ${message}`));
    console.log(`ccotel ui: open ${ui.loginUrl}`);
    console.log(`(${LOGIN_NOTE}; Ctrl-C stops)`);
    const stop = () => {
      void ui
        .close()
        .then(unrecord)
        .then(() => endpoint?.close())
        .then(() => store.close())
        .then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
