// One interactive Codex session (the TUI, in a tmux pane) recorded offline: the scripted Responses API answers, the
// approval policy makes Codex ask before a command that wants to leave the sandbox, and the keys pressed decline the
// first such command (Esc: "No, and tell Codex what to do differently"), approve the second (y), and approve the third
// then interrupt it while it runs (Esc once it started). `codex exec`
// cannot ask (it forces the policy to never), so approvals are seen only here. Besides the rollouts, the folder
// keeps what each other party saw: every hook payload (a hook on every event copies its stdin), Codex's own OTel log
// exports (`[otel]` exporter otlp-http, JSON), the server's answers and the screens.
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CODEX_HOOK_EVENTS, codexHookTrustHash, eventLabel } from '../../sidecar/src/sources/codex/install-hooks.js';
import { compareVersions } from './claude-releases.js';
import { startOtlpReceiver } from './otlp-receiver.js';
import { startResponsesServer, type ResponsesStep } from './responses-server.js';
import { copyStdinHookCommand, readHookPayloads } from './run-claude.js';
import { CODEX_MODEL, writeCodexConfig } from './run-codex.js';
import { startPane, type TmuxPane } from './tmux-pane.js';

const usage = (input: number, cached: number, output: number) => ({ input_tokens: input, cached_input_tokens: cached, output_tokens: output, reasoning_output_tokens: 0 });
/** What the approved command that is then interrupted creates as it starts (in the project): then it runs. */
const STARTED = 'started.txt';
/**
 * How long it runs before Esc: as a user would let it, and longer than Codex takes to export its approval (its logs
 * go out in batches a second apart; on 0.130 ccotel reads the approval as the call's output comes, docs/CODEX.md).
 */
const RUNS_BEFORE_INTERRUPT_MS = 3_000;
const RUNS_UNTIL_INTERRUPTED = `touch ${STARTED} && sleep 30`;
/** A command the model asks to run outside the sandbox: under `on-request` Codex asks the user first. */
const escalated = (cmd: string) => ({ name: 'exec_command', arguments: { cmd, sandbox_permissions: 'require_escalated', justification: 'to write the file' } });

/** The prompts typed, each with the server's answers to it (distinct usage: each response is told apart by it). */
export const TUI_SCENARIO: { prompt: string; steps: ResponsesStep[] }[] = [
  { prompt: 'say hello', steps: [{ text: 'Hello there.', usage: usage(1100, 0, 12) }] },
  { prompt: 'make declined.txt', steps: [{ calls: [escalated('touch declined.txt')], usage: usage(1300, 1024, 30) }] },
  { prompt: 'make approved.txt', steps: [{ calls: [escalated('touch approved.txt')], usage: usage(1500, 1024, 31) }, { text: 'Made it.', usage: usage(1700, 1280, 9) }] },
  { prompt: 'make started.txt slowly', steps: [{ calls: [escalated(RUNS_UNTIL_INTERRUPTED)], usage: usage(1900, 1536, 33) }] },
];

/**
 * Releases whose TUI now and then never starts its thread: the prompt stays in the box, no hook fires, no request
 * reaches the server, and Codex waits on its own threads. 0.150.0: 3 sessions of 12 on a loaded machine, with and
 * without hooks (0.171.0: none of 6 in the same loop). Their TUI is recorded until a session goes through, and not
 * driven by the suites, which would fail at random.
 */
export const TUI_STALLS_AT_START: ReadonlySet<string> = new Set(['0.150.0']);

/** From this release the TUI runs against a background app-server unless told not to (one left running otherwise). */
const FIRST_DAEMON = '0.171.0';
/** Codex caps a SessionEnd hook's timeout at 3 s and trusts it by the capped value: the copying hook keeps under it. */
const HOOK_TIMEOUT_S = 3;
/** The footer under the input box (0.171 shows the shortcuts hint before the first prompt). */
const PROMPT_BOX = new RegExp(`for shortcuts|${CODEX_MODEL.replaceAll('.', '\\.')} \\S+ ·`);
const APPROVAL = /Would you like to run the following command\?|Allow command\?/;

/** What else the session's config.toml holds: Codex's OTel log export, and a hook on every event (trusted). */
export interface TuiExtras {
  otlpUrl?: string;
  hookCommand?: string;
}

/** config.toml for the session: the scripted provider, approvals on request, the project trusted, and `extras`. */
export function writeTuiConfig(codexHome: string, project: string, modelUrl: string, extras: TuiExtras = {}): void {
  writeCodexConfig(codexHome, modelUrl);
  const path = join(codexHome, 'config.toml');
  const hooksPath = join(codexHome, 'hooks.json');
  const text = readFileSync(path, 'utf8').replace('approval_policy = "never"', 'approval_policy = "on-request"\nsandbox_mode = "workspace-write"');
  const lines = [text, `[projects.${JSON.stringify(project)}]`, 'trust_level = "trusted"', ''];
  if (extras.otlpUrl) lines.push('[otel]', 'environment = "test"', 'log_user_prompt = true', '[otel.exporter.otlp-http]', `endpoint = "${extras.otlpUrl}/v1/logs"`, 'protocol = "json"', '');
  const { hookCommand } = extras;
  if (hookCommand) {
    const handler = { type: 'command', command: hookCommand, timeout: HOOK_TIMEOUT_S };
    lines.push(...CODEX_HOOK_EVENTS.flatMap((event) => [`[hooks.state.${JSON.stringify(`${hooksPath}:${eventLabel(event)}:0:0`)}]`, `trusted_hash = ${JSON.stringify(codexHookTrustHash(event, handler))}`]), '');
    writeFileSync(hooksPath, JSON.stringify({ hooks: Object.fromEntries(CODEX_HOOK_EVENTS.map((event) => [event, [{ hooks: [handler] }]])) }, null, 2) + '\n');
  }
  writeFileSync(path, lines.join('\n'));
}

async function waitForFile(path: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !existsSync(path); await sleep(100)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
  }
}

/** Types a prompt once the input box is there and sends it; Codex starts the turn. */
async function submit(pane: TmuxPane, prompt: string): Promise<void> {
  await pane.waitFor(PROMPT_BOX);
  await sleep(500); // the box takes keys a moment after it shows
  await pane.type(prompt);
  await pane.waitFor(prompt);
  await pane.press('Enter');
}

/**
 * Drives the TUI `binary` of `version` (CODEX_HOME `codexHome`, config written, the server holding TUI_SCENARIO's
 * steps) through the session: the screens after each step, and its exit status.
 */
export async function driveCodexTui(binary: string, version: string, codexHome: string, project: string): Promise<{ screens: string[]; exitStatus: number }> {
  const args = compareVersions(version, FIRST_DAEMON) >= 0 ? ['--no-daemon'] : [];
  const env = { PATH: process.env.PATH ?? '', HOME: codexHome, CODEX_HOME: codexHome, TMPDIR: process.env.TMPDIR ?? tmpdir(), LANG: 'C.UTF-8', TERM: 'xterm-256color', RUST_LOG: 'error' };
  const pane = await startPane({ command: [binary, ...args], env, cwd: project, label: `Codex ${version}`, columns: 140, rows: 50 });
  const screens: string[] = [];
  try {
    const [hello, declined, approved, interrupted] = TUI_SCENARIO;
    await submit(pane, hello.prompt);
    screens.push(await pane.waitFor('Hello there.'));
    await submit(pane, declined.prompt);
    screens.push(await pane.waitFor(APPROVAL));
    await pane.press('Escape');
    screens.push(await pane.waitFor((screen) => !APPROVAL.test(screen) && PROMPT_BOX.test(screen)));
    await submit(pane, approved.prompt);
    screens.push(await pane.waitFor(APPROVAL));
    await pane.press('y');
    screens.push(await pane.waitFor('Made it.'));
    await submit(pane, interrupted.prompt);
    screens.push(await pane.waitFor(APPROVAL));
    await pane.press('y');
    await waitForFile(join(project, STARTED));
    await sleep(RUNS_BEFORE_INTERRUPT_MS);
    await pane.press('Escape');
    // Its own notice, after its approval (the declined turn's is on the screen already).
    const approvedIt = `You approved codex to run ${RUNS_UNTIL_INTERRUPTED}`;
    screens.push(await pane.waitFor((screen) => screen.includes(approvedIt) && screen.indexOf('Conversation interrupted', screen.lastIndexOf(approvedIt)) !== -1));
    await pane.waitFor(PROMPT_BOX);
    // Ctrl-C at an empty prompt quits (0.171; an older release may ask for it twice).
    await pane.press('C-c');
    const exitStatus = await pane.waitForExit(5_000).catch(async () => {
      await pane.press('C-c');
      return pane.waitForExit(30_000);
    });
    return { screens, exitStatus };
  } finally {
    await pane.kill();
  }
}

/** Runs the session with the TUI `binary` of `version` and leaves its folder in `out` (emptied first). */
export async function recordCodexTui(binary: string, version: string, out: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'ccotel-codex-tui-'));
  const server = await startResponsesServer([]);
  const receiver = await startOtlpReceiver();
  try {
    const codexHome = join(work, 'codex-home');
    const project = join(work, 'project');
    const hookDir = join(work, 'hooks');
    mkdirSync(project, { recursive: true });
    mkdirSync(hookDir);
    writeTuiConfig(codexHome, project, server.url, { otlpUrl: receiver.url, hookCommand: copyStdinHookCommand(hookDir) });
    for (const { steps } of TUI_SCENARIO) server.addSteps(steps);
    const { screens, exitStatus } = await driveCodexTui(binary, version, codexHome, project);
    await sleep(1500); // the last log export after the exit
    if (server.remainingSteps() !== 0) throw new Error(`codex ${version} TUI: ${server.remainingSteps()} steps left:\n${screens.at(-1)}`);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    cpSync(join(codexHome, 'sessions'), join(out, 'sessions'), { recursive: true });
    // Each with the time it fired (the copying hook names its file by it).
    for (const { file, payload } of readHookPayloads(hookDir)) appendFileSync(join(out, 'hooks.jsonl'), JSON.stringify({ firedAtNs: file.split('-')[0], payload }) + '\n');
    for (const exported of receiver.exports.filter((e) => e.signal === 'logs')) appendFileSync(join(out, 'otel-logs.jsonl'), JSON.stringify(exported.body) + '\n');
    const answered = server.requests.filter((request) => request.step !== undefined).map(({ step, responseId, callIds }) => ({ step, responseId, callIds }));
    writeFileSync(join(out, 'server.json'), JSON.stringify({ version, scenario: TUI_SCENARIO, exitStatus, answered }, null, 2) + '\n');
    writeFileSync(join(out, 'screens.txt'), screens.map((screen) => screen.replace(/\s+$/gm, '').trim()).join('\n\n-----\n\n') + '\n');
  } finally {
    await server.close();
    await receiver.close();
    rmSync(work, { recursive: true, force: true });
  }
}
