// ccotel as a Claude Code plugin (issue 31), with the real CLI 2.1.332 offline: the repository's marketplace added
// and the plugin installed by `claude plugin …` in a temp HOME, then the same print-mode session (two Bash calls,
// one failing) as in a HOME with install-hooks and install-shell, and in one with both. The plugin must spool every
// event install-hooks spools, with the same payload keys, log the same shell commands, and with both installed
// each event must be spooled once; `ccotel doctor` (the build: `npm run build` first) must tell which way is in use.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installHooks } from '../../sidecar/src/install/hooks.js';
import { installShell } from '../../sidecar/src/install/shell.js';
import { statePaths } from '../../sidecar/src/paths.js';
import { startModelServer, type Step } from '../harness/model-server.js';
import { CLAUDE_BINARY, claudeBinaryProblem, runClaude } from '../harness/run-claude.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, runCli, runProcess, type ProcessResult } from '../reliability/cli.js';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const COMMANDS = ['echo hello-from-plugin', 'ls /definitely/not/here; exit 3'];
const steps = (): Step[] => [
  ...COMMANDS.map((command) => ({ toolCalls: [{ name: 'Bash', input: { command, description: 'run' } }], usage })),
  { text: 'done', usage },
];

const dir = mkdtempSync(join(tmpdir(), 'ccotel-plugin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Setup = 'install-hooks' | 'plugin' | 'both';
interface Spooled {
  event: string;
  keys: string;
}
interface Run {
  home: string;
  spooled: Spooled[];
  shell: string[];
  installWarnings: string[];
}
const runs = {} as Record<Setup, Run>;

function claudePlugin(home: string, ...args: string[]): Promise<ProcessResult> {
  return runProcess(CLAUDE_BINARY, ['plugin', ...args], { PATH: process.env.PATH, HOME: home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' });
}

async function installPlugin(home: string): Promise<void> {
  for (const args of [['marketplace', 'add', REPO_ROOT], ['install', 'ccotel@ccotel']]) {
    const result = await claudePlugin(home, ...args);
    expect(result.status, `claude plugin ${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0);
  }
}

/** Each spooled event (name and payload keys), in firing order: the file's modification time, then its pid. */
function spooled(home: string): Spooled[] {
  const spool = statePaths({ HOME: home }).spoolDir;
  return readdirSync(spool)
    .map((name) => ({ name, at: statSync(join(spool, name), { bigint: true }).mtimeNs, pid: Number(name.split('-')[0]) }))
    .sort((a, b) => (a.at === b.at ? a.pid - b.pid : a.at < b.at ? -1 : 1))
    .map(({ name }) => {
      const payload = JSON.parse(readFileSync(join(spool, name), 'utf8')) as Record<string, unknown>;
      return { event: String(payload.hook_event_name), keys: Object.keys(payload).sort().join(',') };
    });
}

/** The shell log's records, without what differs from run to run (pids, times, the session id). */
function shellLog(home: string): string[] {
  const logDir = statePaths({ HOME: home }).shellLogDir;
  return readdirSync(logDir).flatMap((name) =>
    readFileSync(join(logDir, name), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { ev: string; cmd?: string; status?: number })
      .map(({ ev, cmd, status }) => `${ev} ${cmd ?? status}`),
  );
}

async function runSession(setup: Setup): Promise<Run> {
  const home = join(dir, setup);
  const projectDir = join(home, 'project');
  mkdirSync(projectDir, { recursive: true });
  if (setup !== 'install-hooks') await installPlugin(home);
  let installWarnings: string[] = [];
  if (setup !== 'plugin') {
    installWarnings = installHooks({ env: { HOME: home } }).warnings;
    installShell({ env: { HOME: home } });
  }
  const server = await startModelServer(steps());
  try {
    const result = await runClaude({ home, projectDir, prompt: 'run two commands', modelUrl: server.url, allowedTools: ['Bash'], timeoutMs: 150_000 });
    expect(result.json?.is_error, `${setup}: ${result.stdout}${result.stderr}`).toBe(false);
  } finally {
    await server.close();
  }
  return { home, spooled: spooled(home), shell: shellLog(home), installWarnings };
}

describe.skipIf(skipWithout(claudeBinaryProblem()))('ccotel as a Claude Code plugin, with the real CLI', () => {
  beforeAll(async () => {
    const setups: Setup[] = ['install-hooks', 'plugin', 'both'];
    const done = await Promise.all(setups.map(runSession));
    setups.forEach((setup, i) => (runs[setup] = done[i]));
  }, 400_000);

  it('installs from the repository with `claude plugin marketplace add` and `claude plugin install`', () => {
    const settings = JSON.parse(readFileSync(join(runs.plugin.home, '.claude', 'settings.json'), 'utf8'));
    expect(settings.enabledPlugins).toEqual({ 'ccotel@ccotel': true });
    expect(settings.hooks).toBeUndefined(); // nothing of install-hooks: the events below came through the plugin
  });

  it('spools every event install-hooks spools, with the same payload keys', () => {
    const events = runs['install-hooks'].spooled.map((e) => e.event);
    for (const expected of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd']) {
      expect(events).toContain(expected);
    }
    const byEvent = (list: Spooled[]) => list.map((e) => `${e.event}: ${e.keys}`).sort();
    expect(byEvent(runs.plugin.spooled)).toEqual(byEvent(runs['install-hooks'].spooled));
  });

  it("puts the shell log's line into CLAUDE_ENV_FILE: the same commands and exit codes as install-shell", () => {
    const expected = ['start echo hello-from-plugin', 'end 0', `start ${COMMANDS[1]}`, 'end 3'];
    expect(runs['install-hooks'].shell).toEqual(expected);
    expect(runs.plugin.shell).toEqual(expected);
  });

  it('with both installed, spools each event once and logs each command once; install-hooks says so', () => {
    const byEvent = (list: Spooled[]) => list.map((e) => `${e.event}: ${e.keys}`).sort();
    expect(byEvent(runs.both.spooled)).toEqual(byEvent(runs['install-hooks'].spooled));
    expect(existsSync(statePaths({ HOME: runs.both.home }).hookDroppedPath)).toBe(false);
    expect(runs.both.shell).toEqual(runs['install-hooks'].shell);
    expect(runs.both.installWarnings.join('\n')).toMatch(/enables the Claude Code plugin ccotel@ccotel too: its hook stands down/);
  });

  it('`ccotel doctor` tells each way from the settings the real CLI wrote, and warns when both are there', async () => {
    assertBuilt();
    const doctorSays = async (setup: Setup) => {
      const result = await runCli(['doctor', '--json', '--otlp', 'http://127.0.0.1:1'], { PATH: process.env.PATH, HOME: runs[setup].home, CCOTEL_CONFIG: 'none' });
      const checks = (JSON.parse(result.stdout) as { checks: { check: string; status: string; message: string }[] }).checks;
      return checks.filter((c) => c.check === 'hooks' || c.check === 'shell').map((c) => `${c.check} ${c.status}: ${c.message}`);
    };
    const [installed, plugin, both] = await Promise.all((['install-hooks', 'plugin', 'both'] as const).map(doctorSays));
    expect(installed).toEqual([expect.stringMatching(/^hooks ok: installed and firing/), expect.stringMatching(/^shell ok: installed and active/)]);
    expect(plugin).toEqual([
      expect.stringMatching(/^hooks ok: enabled as the Claude Code plugin ccotel@ccotel and firing/),
      expect.stringMatching(/^shell ok: set up by the Claude Code plugin ccotel@ccotel and active/),
    ]);
    expect(both[0]).toMatch(/^hooks warn: both ways at once: .* the plugin ccotel@ccotel\. The plugin's hook stands down/);
  });
});
