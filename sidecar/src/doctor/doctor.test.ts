// Every doctor check against a temporary HOME: first a healthy setup (made with the real install
// commands), then, per check, a broken setup that must make exactly that check report the problem.
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerDoctorCommand } from '../commands/doctor.js';
import { installHooks } from '../install/hooks.js';
import { installCodexHooks } from '../sources/codex/install-hooks.js';
import { installShell } from '../install/shell.js';
import { installTelemetry } from '../install/telemetry.js';
import { DEFAULTS } from '../config.js';
import { statePaths, type StatePaths } from '../paths.js';
import { openStore } from '../store/open-store.js';
import { serveStore } from '../store/query-endpoint.js';
import type { CheckResult } from './check.js';
import { runDoctor, type DoctorReport } from './run-doctor.js';

let home: string;
let env: Record<string, string | undefined>;
let paths: StatePaths;
let transcript: string;
let collector: { server: Server; url: string; status: number; date?: string; seen: { path?: string; auth?: string; bytes: number }[] };

/** A stand-in OTLP/HTTP receiver: answers every request with `collector.status` (and its Date header). */
async function startCollector(): Promise<void> {
  const state = { status: 200, seen: [] as { path?: string; auth?: string; bytes: number }[], date: undefined as string | undefined };
  const server = createServer((request, response) => {
    let bytes = 0;
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      state.seen.push({ path: request.url, auth: request.headers.authorization, bytes });
      if (state.date) response.setHeader('Date', state.date);
      response.writeHead(state.status, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  collector = Object.assign(state, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

const nsNow = (offsetMs = 0) => (BigInt(Date.now() + offsetMs) * 1_000_000n).toString().padStart(20, '0');

/** What a working host looks like: a recent transcript, hooks and shell installed and used, private state. */
function healthySetup(): void {
  const project = join(home, '.claude', 'projects', '-home-me-proj');
  mkdirSync(project, { recursive: true });
  transcript = join(project, '0b5d7a52-1c1e-4c7e-9f1a-2a3b4c5d6e7f.jsonl');
  writeFileSync(transcript, `${JSON.stringify({ type: 'user', timestamp: new Date(Date.now() - 60_000).toISOString(), message: { role: 'user', content: 'hi' } })}\n`);
  installHooks({ env });
  installShell({ env });
  writeFileSync(join(paths.spoolDir, `${nsNow(-30_000)}-4242-0a1b2c3d.json`), '{"hook_event_name":"Stop"}', { mode: 0o600 });
  mkdirSync(paths.shellLogDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(paths.shellLogDir, 'session.jsonl'), '{"v":1,"ev":"start"}\n', { mode: 0o600 });
  mkdirSync(paths.checkpointDir, { recursive: true, mode: 0o700 });
  writeFileSync(paths.keyPath, 'k'.repeat(64), { mode: 0o600 });
}

async function doctor(overrides: { store?: string; otlp?: string; collectorHealthUrl?: string } = {}): Promise<DoctorReport> {
  return runDoctor({ env, store: overrides.store ?? '', otlp: overrides.otlp ?? collector.url, collectorHealthUrl: overrides.collectorHealthUrl, timeoutMs: 3000 });
}

function check(report: DoctorReport, name: string): CheckResult {
  const found = report.checks.find((c) => c.check === name);
  if (!found) throw new Error(`no ${name} check in ${JSON.stringify(report)}`);
  return found;
}

/** The broken check reports the problem; every other check is unaffected. */
function expectOnly(report: DoctorReport, name: string, status: 'warn' | 'fail', message: RegExp, fix: RegExp): void {
  expect(check(report, name)).toMatchObject({ status });
  expect(check(report, name).message).toMatch(message);
  expect(check(report, name).fix).toMatch(fix);
  expect(report.checks.filter((c) => c.check !== name && c.status !== 'ok')).toEqual([]);
  expect(report.healthy).toBe(status !== 'fail');
}

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-doctor-'));
  env = { HOME: home, USER: 'agent', PATH: process.env.PATH };
  paths = statePaths(env);
  await startCollector();
  healthySetup();
});
afterEach(async () => {
  await new Promise((resolve) => collector.server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

describe('doctor on a healthy host', () => {
  it('passes every check and sends the collector one empty export', async () => {
    const report = await doctor();
    expect(report.checks.map((c) => [c.check, c.status])).toEqual([
      ['transcripts', 'ok'], ['codex', 'ok'], ['hooks', 'ok'], ['shell', 'ok'], ['store', 'ok'], ['telemetry', 'ok'], ['collector', 'ok'], ['clock', 'ok'], ['disk', 'ok'], ['permissions', 'ok'],
    ]);
    expect(report.healthy).toBe(true);
    expect(check(report, 'hooks').message).toMatch(/installed and firing: last hook event \d s ago, none dropped/);
    expect(check(report, 'clock').message).toMatch(/agrees with .*the collector/);
    expect(collector.seen).toEqual([{ path: '/v1/traces', auth: undefined, bytes: 0 }]);
  });

  it('prints JSON and exits non-zero only when something failed', async () => {
    let output = '';
    const run = async () => {
      output = '';
      process.exitCode = undefined;
      const program = new Command('ccotel').exitOverride();
      registerDoctorCommand(program, { env, out: (text) => (output += text) });
      await program.parseAsync(['doctor', '--json', '--store', '', '--otlp', collector.url], { from: 'user' });
    };
    await run();
    expect(JSON.parse(output)).toMatchObject({ healthy: true });
    expect(process.exitCode).toBeUndefined();
    collector.status = 401;
    await run();
    expect(JSON.parse(output).checks.find((c: CheckResult) => c.check === 'collector').status).toBe('fail');
    expect(process.exitCode).toBe(1);
    process.exitCode = undefined;
  });
});

describe('doctor on a broken host', () => {
  it('transcripts: no projects directory anywhere', async () => {
    rmSync(join(home, '.claude', 'projects'), { recursive: true });
    expectOnly(await doctor(), 'transcripts', 'fail', /no transcript root/, /CLAUDE_CONFIG_DIR/);
  });

  it('codex: rollouts found, none, or a rollout the user cannot read', async () => {
    expect(check(await doctor(), 'codex').message).toMatch(/no Codex rollouts .*does not exist/);
    const rollout = join(home, '.codex', 'sessions', '2026', '12', '04', 'rollout-2026-12-04T21-11-41-01a242e6-089b-7dd0-b043-2759fcaf119b.jsonl');
    mkdirSync(join(rollout, '..'), { recursive: true });
    writeFileSync(rollout, '{}\n');
    expect(check(await doctor(), 'codex')).toMatchObject({ status: 'ok', message: expect.stringMatching(/: 1 rollout readable, newest written/) });
    // ccotel's hooks installed and trusted; then config.toml without its trust entries: Codex would skip them silently.
    installCodexHooks({ env: { ...env, CODEX_HOME: join(home, '.codex') } });
    expect(check(await doctor(), 'codex')).toMatchObject({ status: 'ok', message: expect.stringMatching(/ccotel's 11 hooks installed and trusted/) });
    writeFileSync(join(home, '.codex', 'config.toml'), 'model = "x"\n');
    expectOnly(await doctor(), 'codex', 'warn', /11 of ccotel's 11 Codex hooks lack their trust entry/, /install-hooks --agent codex/);
    if (process.getuid?.() === 0) return; // root reads every file
    chmodSync(rollout, 0o000);
    expectOnly(await doctor(), 'codex', 'fail', /1 rollout is not readable/, /chmod u\+r/);
  });

  it('transcripts: projects is a file', async () => {
    rmSync(join(home, '.claude', 'projects'), { recursive: true });
    writeFileSync(join(home, '.claude', 'projects'), '');
    expectOnly(await doctor(), 'transcripts', 'fail', /is not a directory/, /move it away/);
  });

  it.skipIf(process.getuid?.() === 0)('transcripts: a project directory the user cannot read', async () => {
    chmodSync(join(home, '.claude', 'projects', '-home-me-proj'), 0o000);
    const report = await doctor();
    chmodSync(join(home, '.claude', 'projects', '-home-me-proj'), 0o700);
    expect(check(report, 'transcripts')).toMatchObject({ status: 'fail' });
    expect(check(report, 'transcripts').message).toMatch(/not readable by this user/);
  });

  it('hooks: not installed', async () => {
    writeFileSync(join(home, '.claude', 'settings.json'), '{}\n');
    installShell({ env });
    expectOnly(await doctor(), 'hooks', 'warn', /not \(fully\) in .*settings\.json/, /ccotel install-hooks/);
  });

  // enabledPlugins as `claude plugin install ccotel@ccotel` (2.1.332) writes it into the user's settings.
  const enablePlugin = (settings: Record<string, unknown>) =>
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ ...settings, enabledPlugins: { 'ccotel@ccotel': true } }, null, 2));

  it('hooks and shell: the ccotel plugin instead of install-hooks and install-shell', async () => {
    enablePlugin({});
    const report = await doctor();
    expect(report.checks.filter((c) => c.status !== 'ok')).toEqual([]);
    expect(check(report, 'hooks').message).toMatch(/^enabled as the Claude Code plugin ccotel@ccotel and firing: last hook event \d s ago/);
    expect(check(report, 'shell').message).toMatch(/^set up by the Claude Code plugin ccotel@ccotel and active/);
  });

  it('hooks: install-hooks and the plugin both', async () => {
    enablePlugin(JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')));
    expectOnly(await doctor(), 'hooks', 'warn', /both ways at once: .* the plugin ccotel@ccotel\. The plugin's hook stands down .*\(installed and firing/, /keep one: ccotel uninstall-hooks, or claude plugin uninstall ccotel@ccotel/);
  });

  it('hooks: disabled in settings.json', async () => {
    const settingsPath = join(home, '.claude', 'settings.json');
    const settings = JSON.parse((await import('node:fs')).readFileSync(settingsPath, 'utf8'));
    writeFileSync(settingsPath, JSON.stringify({ ...settings, disableAllHooks: true }));
    expectOnly(await doctor(), 'hooks', 'fail', /"disableAllHooks": true/, /remove "disableAllHooks"/);
  });

  it('hooks: the script settings.json runs is gone', async () => {
    unlinkSync(join(paths.binDir, 'ccotel-hook.sh'));
    expectOnly(await doctor(), 'hooks', 'fail', /ccotel-hook\.sh, which does not exist/, /ccotel install-hooks/);
  });

  it('hooks: events dropped by the hook', async () => {
    appendFileSync(paths.hookDroppedPath, `${nsNow(-5000)} mkdir\n${nsNow(-1000)} write\n`);
    expectOnly(await doctor(), 'hooks', 'fail', /dropped 2 events \(last: write failed at /, /rm .*hook-dropped/);
  });

  it('hooks: installed but not firing while Claude Code writes transcripts', async () => {
    rmSync(paths.spoolDir, { recursive: true });
    mkdirSync(paths.spoolDir, { mode: 0o700 });
    writeFileSync(join(paths.spoolDir, `${nsNow(-3 * 3600_000)}-4242-0a1b2c3d.json`), '{}', { mode: 0o600 });
    const threeHoursAgo = (Date.now() - 3 * 3600_000) / 1000;
    utimesSync(paths.spoolDir, threeHoursAgo, threeHoursAgo);
    expectOnly(await doctor(), 'hooks', 'fail', /not firing: Claude Code wrote a transcript 3\.0 h after the last hook event reached the spool/, /restart the Claude Code sessions/);
  });

  it('hooks: firing while the sidecar empties the spool (the directory changed recently)', async () => {
    rmSync(paths.spoolDir, { recursive: true });
    mkdirSync(paths.spoolDir, { mode: 0o700 });
    const report = await doctor();
    expect(check(report, 'hooks')).toMatchObject({ status: 'ok' });
    expect(check(report, 'hooks').message).toMatch(/installed and firing/);
  });

  it('shell: not installed', async () => {
    writeFileSync(join(home, '.claude', 'settings.json'), '{}\n');
    installHooks({ env });
    expectOnly(await doctor(), 'shell', 'warn', /shell integration is not in/, /ccotel install-shell/);
  });

  it('shell: the sourced script is gone', async () => {
    unlinkSync(join(paths.binDir, 'ccotel-shell.bash'));
    expectOnly(await doctor(), 'shell', 'fail', /ccotel-shell\.bash, which does not exist/, /ccotel install-shell/);
  });

  it('store: a ClickHouse server that does not answer', async () => {
    expectOnly(await doctor({ store: 'http://default:secret@127.0.0.1:1' }), 'store', 'fail', /ClickHouse http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/, /CCOTEL_STORE/);
  });

  it('store: embedded, through the running sidecar, then idle; a missing table is reported both ways', async () => {
    const dir = join(home, 'store');
    const store = await openStore(dir, { command: 'run', access: 'write' });
    const endpoint = await serveStore(store, 'run');
    try {
      const good = await doctor({ store: dir });
      expect(check(good, 'store')).toMatchObject({ status: 'ok' });
      expect(check(good, 'store').message).toMatch(/through ccotel run, pid \d+.*all 9 otel_\* tables present/);
      await store.client.command({ query: 'DROP TABLE otel_logs' });
      expectOnly(await doctor({ store: dir }), 'store', 'fail', /through ccotel run.*missing otel_logs/, /ccotel run/);
    } finally {
      await endpoint.close();
      await store.close();
    }
    const idle = await doctor({ store: dir });
    expectOnly(idle, 'store', 'fail', /no sidecar running; read from its metadata\): reachable, but missing otel_logs/, /ccotel run/);
  });

  it("telemetry: Claude Code's own sent elsewhere, then to ccotel with no run holding the store", async () => {
    mkdirSync(join(home, '.claude'), { recursive: true });
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ ...settings, env: { CLAUDE_CODE_ENABLE_TELEMETRY: '1', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example' } }));
    expectOnly(await doctor(), 'telemetry', 'warn', /on but goes to https:\/\/collector\.example; ccotel receives on http:\/\/127\.0\.0\.1:\d+/, /install-telemetry --replace/);
    installTelemetry({ env, port: DEFAULTS.nativeTelemetryPort, replace: true });
    // OTLP only: nothing to look into, forwarded.
    expect((await doctor()).checks.find((c) => c.check === 'telemetry')).toMatchObject({ status: 'ok', message: expect.stringMatching(/forwards it to its collector/) });
    const idle = check(await doctor({ store: join(home, 'store') }), 'telemetry');
    expect(idle).toMatchObject({ status: 'warn', fix: 'start ccotel run' });
    expect(idle.message).toMatch(/no ccotel run is holding the store/);
  });

  it('telemetry: installed and arriving; none yet; stopped while the transcripts go on', async () => {
    installTelemetry({ env, port: DEFAULTS.nativeTelemetryPort });
    const dir = join(home, 'store');
    const store = await openStore(dir, { command: 'run', access: 'write' });
    const endpoint = await serveStore(store, 'run');
    const nativeRowAt = (ms: number) =>
      store.client.insert({ table: 'otel_logs', values: [{ Timestamp: new Date(ms).toISOString().replace('T', ' ').replace('Z', ''), ServiceName: 'claude-code', Body: 'claude_code.api_request' }], format: 'JSONEachRow' });
    try {
      expectOnly(await doctor({ store: dir }), 'telemetry', 'warn', /none is in the store yet/, /restart the Claude Code sessions/);
      await nativeRowAt(Date.now() - 3_600_000);
      expectOnly(await doctor({ store: dir }), 'telemetry', 'warn', /newest of Claude Code's own telemetry is 60 min old, but a transcript was written \d+ s ago: its export stopped/, /ccotel run/);
      await nativeRowAt(Date.now() - 5_000);
      const good = await doctor({ store: dir });
      expect(check(good, 'telemetry')).toMatchObject({ status: 'ok' });
      expect(check(good, 'telemetry').message).toMatch(/arrives \(newest \d s ago/);
    } finally {
      await endpoint.close();
      await store.close();
    }
  });

  it('store: embedded, never created', async () => {
    expectOnly(await doctor({ store: join(home, 'nowhere') }), 'store', 'warn', /no embedded store there yet/, /ccotel run/);
  });

  it('collector: nothing listens', async () => {
    expectOnly(await doctor({ otlp: 'http://127.0.0.1:1' }), 'collector', 'fail', /ECONNREFUSED/, /start the collector/);
  });

  it('collector: refuses the token', async () => {
    collector.status = 401;
    expectOnly(await doctor(), 'collector', 'fail', /HTTP 401 \(authentication\)/, /OTEL_EXPORTER_OTLP_HEADERS/);
  });

  it('collector: no OTLP receiver at that path', async () => {
    collector.status = 404;
    expectOnly(await doctor({ otlp: `${collector.url}/v1/traces` }), 'collector', 'fail', /v1\/traces\/v1\/traces: HTTP 404/, /without \/v1\/traces/);
  });

  it('collector: accepts, but its health check says not ready', async () => {
    const health = createServer((_request, response) => response.writeHead(503).end('{"status":"Server not available"}'));
    await new Promise<void>((resolve) => health.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(health.address() as AddressInfo).port}/`;
      expectOnly(await doctor({ collectorHealthUrl: url }), 'collector', 'fail', /health check .*HTTP 503/, /not ready/);
    } finally {
      await new Promise((resolve) => health.close(resolve));
    }
  });

  it('clock: a transcript record from this host\'s future', async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    appendFileSync(transcript, `${JSON.stringify({ type: 'assistant', timestamp: future })}\n`);
    expectOnly(await doctor(), 'clock', 'fail', /newest transcript record is from .*, 60 min in this host's future/, /time synchronisation/);
  });

  it('clock: the collector disagrees by ten minutes', async () => {
    collector.date = new Date(Date.now() - 10 * 60_000).toUTCString();
    expectOnly(await doctor(), 'clock', 'fail', /this host is 10 min ahead of the collector/, /time synchronisation/);
  });

  it('clock: a file written in the future (clock set back after writing)', async () => {
    const future = (Date.now() + 2 * 3600_000) / 1000;
    utimesSync(transcript, future, future);
    const report = await doctor();
    expect(check(report, 'clock')).toMatchObject({ status: 'fail' });
    expect(check(report, 'clock').message).toMatch(/newest transcript file is from .*in this host's future/);
  });

  it('disk: the queue bound does not fit on the filesystem', async () => {
    env.CCOTEL_OTLP_QUEUE_MAX_MB = String(1024 ** 3); // one PiB
    expectOnly(await doctor(), 'disk', 'fail', /MiB free for the OTLP queue \(bound 1073741824 MiB.*not enough/, /lower CCOTEL_OTLP_QUEUE_MAX_MB/);
  });

  it('permissions: spool dir, spool files, key and store dir open to others', async () => {
    const storeDir = join(home, 'store');
    mkdirSync(storeDir, { mode: 0o755 });
    chmodSync(storeDir, 0o755);
    chmodSync(paths.spoolDir, 0o755);
    writeFileSync(join(paths.spoolDir, `${nsNow()}-1-00000000.json`), '{}', { mode: 0o644 });
    chmodSync(paths.keyPath, 0o644);
    const report = await doctor({ store: storeDir });
    expect(check(report, 'permissions')).toMatchObject({ status: 'fail' });
    const { message, fix } = check(report, 'permissions');
    expect(message).toMatch(/spool dir .* is 755, should be 700/);
    expect(message).toMatch(/1 of 2 spool files are readable by others/);
    expect(message).toMatch(/installation key .* is 644, should be 600/);
    expect(message).toMatch(/store dir .* is 755, should be 700/);
    expect(fix).toContain(`chmod 700 ${paths.spoolDir}`);
    expect(fix).toContain(`chmod 600 ${paths.keyPath}`);
    expect(report.healthy).toBe(false);
  });
});
