// `npm run demo [-- --store <dir|url>]`: real data in ccotel without ever having used Claude Code.
// Runs every harness scenario against the real Claude Code CLI (offline: a scripted model on loopback)
// as a made-up user in a temp HOME, then `ccotel backfill` reads that HOME — and nothing of yours — into
// your store (the default one, or --store), and `ccotel report` shows what it holds.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { configFilePath, loadConfig } from '../../sidecar/src/config.js';
import { runScenarios } from '../e2e/scenario-runs.js';
import { claudeBinaryProblem, CLAUDE_BINARY } from './run-claude.js';
import { SCENARIOS } from './scenarios.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/sidecar/src/cli.js');

function fail(message: string): never {
  console.error(`ccotel demo: ${message}`);
  process.exit(1);
}

function ccotel(args: string[], env: NodeJS.ProcessEnv): void {
  const result = spawnSync(process.execPath, [CLI, ...args], { env, stdio: 'inherit' });
  if (result.status !== 0) fail(`\`ccotel ${args.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
}

const { values } = parseArgs({ options: { store: { type: 'string' } } });
const problem = claudeBinaryProblem();
if (problem) fail(`the demo drives the real Claude Code CLI, which cannot run here: ${problem}`);
if (!existsSync(CLI)) fail(`${CLI} is missing: run \`npm run build\` first`);

// Your store and your ccotel settings, resolved before HOME is pointed at the made-up user.
const config = loadConfig({ store: values.store });
const root = mkdtempSync(join(tmpdir(), 'ccotel-demo-'));
const home = join(root, 'home');
try {
  const version = spawnSync(CLAUDE_BINARY, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`Running ${SCENARIOS.length} scenarios against ${version} in ${root} (offline, scripted model)…`);
  const started = performance.now();
  const outcomes = await runScenarios({ home, workDir: join(root, 'projects') });
  for (const outcome of outcomes) {
    const sessions = outcome.sessions.map((s) => `${s.sessionId.slice(0, 8)} (${s.runs.length} run${s.runs.length > 1 ? 's' : ''})`);
    console.log(`  ${outcome.scenario.padEnd(20)} ${sessions.join(', ')}`);
  }
  console.log(`Done in ${((performance.now() - started) / 1000).toFixed(1)} s. Backfilling into ${config.store}…\n`);

  // backfill reads transcripts from HOME / CLAUDE_CONFIG_DIR / XDG_CONFIG_HOME: all of them point at the
  // made-up user, while the config file and state (masking key) stay yours.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    CCOTEL_CONFIG: configFilePath(process.env),
    CCOTEL_STATE_DIR: config.paths.stateDir,
  };
  delete env.CLAUDE_CONFIG_DIR;
  ccotel(['backfill', '--store', config.store, '--no-progress'], env);
  console.log('');
  ccotel(['report', '--store', config.store], process.env);
  console.log(`The demo sessions are in ${config.store}; explore them with \`ccotel query\` or the Grafana dashboards.`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
