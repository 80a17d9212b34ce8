// `ccotel install-hooks --agent codex` and `install-shell --agent codex` against the real CLI of each cached release
// (codex-releases.ts; none: skipped, failing under CI): the hooks it registers in hooks.json are trusted by the hash it
// writes in config.toml, so Codex runs them — every event of a run, a call's with its call id, and a resumed run's
// SessionStart with source resume — and the bash of each command Codex runs logs it, so its `shell` span lands under
// the call's execute_tool span; the user's own hook and settings stay; uninstall gives both files back as they were.
import { appendFileSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexReleasesForTests } from '../harness/codex-releases.js';
import { startResponsesServer } from '../harness/responses-server.js';
import { runCodex, threadIdOf, writeCodexConfig } from '../harness/run-codex.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, CLI, cliEnv, runProcess } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';
import { codexTestHome } from '../helpers/codex-test-home.js';
import { codexHookTrustHash } from '../../sidecar/src/sources/codex/install-hooks.js';

const shell = (cmd: string) => ({ name: 'exec_command', arguments: { cmd } });
const usage = { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 };

interface Spooled {
  hook_event_name: string;
  session_id: string;
  source?: string;
  tool_use_id?: string;
  tool_name?: string;
}

describe.each(codexReleasesForTests())('install-hooks --agent codex on Codex $version', ({ binary, missing }) => {
  it.skipIf(skipWithout(missing))(
    'registers and trusts the spool hook, which Codex runs for every event, and takes it out again',
    async () => {
      assertBuilt();
      const { home, codexHome, project } = codexTestHome('ccotel-codex-hooks');
      const env = cliEnv(home);
      const server = await startResponsesServer([]);
      try {
        writeCodexConfig(codexHome, server.url);
        // The user's own hooks and settings: kept as they are. The second, trusted, keeps the environment Codex
        // gives a hook: no CODEX_THREAD_ID, which its commands get (so the process detectors never take a slow hook
        // for a command of the thread).
        const envHook = { type: 'command', command: `env > ${join(home, 'hook-env')}.$$`, timeout: 10 };
        const ownHook = { hooks: { PreToolUse: [{ matcher: 'exec_command', hooks: [{ type: 'command', command: 'true' }] }, { hooks: [envHook] }] } };
        writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify(ownHook, null, 4) + '\n');
        const trustKey = `${realpathSync(join(codexHome, 'hooks.json'))}:pre_tool_use:1:0`;
        appendFileSync(join(codexHome, 'config.toml'), `[hooks.state.${JSON.stringify(trustKey)}]\ntrusted_hash = ${JSON.stringify(codexHookTrustHash('PreToolUse', envHook))}\n`);
        const configBefore = readFileSync(join(codexHome, 'config.toml'), 'utf8');
        const hooksBefore = readFileSync(join(codexHome, 'hooks.json'), 'utf8');
        const ccotel = async (...args: string[]) => {
          const result = await runProcess(process.execPath, [CLI, ...args, '--agent', 'codex', '--codex-home', codexHome], env, 60_000);
          expect(result.status, result.stderr).toBe(0);
          return result.stdout;
        };
        await ccotel('install-hooks');
        expect(await ccotel('install-hooks')).toMatch(/already as wanted/);
        await ccotel('install-shell');
        const hooks = JSON.parse(readFileSync(join(codexHome, 'hooks.json'), 'utf8')) as typeof ownHook;
        expect(hooks.hooks.PreToolUse.slice(0, 2)).toEqual(ownHook.hooks.PreToolUse);
        const trusted = readFileSync(join(codexHome, 'config.toml'), 'utf8');
        expect(trusted.startsWith(configBefore)).toBe(true);
        const spool = join(home, 'state', 'spool');
        // Without its trust entries Codex skips the hooks, silently: what the hashes are for.
        writeFileSync(join(codexHome, 'config.toml'), configBefore);
        server.addSteps([{ text: 'Not hooked.', usage }]);
        expect((await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'untrusted' })).code).toBe(0);
        expect(readdirSync(spool)).toEqual([]);
        writeFileSync(join(codexHome, 'config.toml'), trusted);

        server.addSteps([{ calls: [shell('echo hooked'), shell('ls no-such-file')], usage }, { text: 'Done.', usage }]);
        const first = await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'run it' });
        expect(first.code, first.stderr).toBe(0);
        const thread = threadIdOf(first.stdout)!;
        server.addSteps([{ text: 'Again.', usage }]);
        const resumed = await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'once more', resume: thread });
        expect(resumed.code, resumed.stderr).toBe(0);

        // Each event's spool file names its agent (the hook was installed for Codex): read as Codex's, whenever.
        expect(readdirSync(spool).filter((name) => !name.endsWith('-codex.json'))).toEqual([]);
        const spooled = readdirSync(spool).map((name) => JSON.parse(readFileSync(join(spool, name), 'utf8')) as Spooled);
        expect(spooled.every((event) => event.session_id === thread)).toBe(true);
        const names = new Set(spooled.map((event) => event.hook_event_name));
        for (const name of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']) expect(names, name).toContain(name);
        expect(spooled.filter((event) => event.hook_event_name === 'SessionStart').map((event) => event.source).sort()).toEqual(['resume', 'startup']);
        const [callId, failingCallId] = server.requests.flatMap((request) => request.callIds ?? []);
        expect(spooled.filter((event) => event.tool_use_id === callId).map((event) => event.hook_event_name).sort()).toEqual(['PostToolUse', 'PreToolUse']);

        const hookEnvs = readdirSync(home).filter((name) => name.startsWith('hook-env.')).map((name) => readFileSync(join(home, name), 'utf8'));
        expect(hookEnvs.length).toBeGreaterThan(0);
        for (const env of hookEnvs) expect(env).not.toMatch(/^CODEX_THREAD_ID=/m);

        // The store: the resumed run is a resume start (0.130's rollout reads it as a second turn: the hook tells),
        // and the call's hooks are on its execute_tool span.
        const store = storeCli(join(home, 'store'), () => env);
        await store.ccotel('backfill', '--json', '--codex-home', codexHome, '--keep-spool');
        const starts = await store.query<{ source: string }>(`SELECT LogAttributes['source'] AS source FROM otel_logs WHERE EventName = 'ccotel.session.started' AND LogAttributes['session.id'] = '${thread}' ORDER BY Timestamp`);
        expect(starts.map((start) => start.source)).toEqual(['startup', 'resume']);
        const [tool] = await store.query<{ SpanId: string }>(`SELECT SpanId FROM otel_traces WHERE SpanAttributes['gen_ai.tool.call.id'] = '${callId}' LIMIT 1`);
        const toolHooks = await store.query<{ event: string; SpanId: string }>(`SELECT DISTINCT EventName AS event, SpanId FROM otel_logs WHERE EventName IN ('ccotel.hook.pre_tool_use', 'ccotel.hook.post_tool_use') AND LogAttributes['tool_use_id'] = '${callId}' ORDER BY event`);
        expect(toolHooks).toEqual([{ event: 'ccotel.hook.post_tool_use', SpanId: tool.SpanId }, { event: 'ccotel.hook.pre_tool_use', SpanId: tool.SpanId }]);

        // Each command's shell span under its own call's span (two calls in parallel), with its command line and exit status.
        const calls = await store.query<{ call: string; SpanId: string }>(`SELECT SpanAttributes['gen_ai.tool.call.id'] AS call, SpanId FROM otel_traces WHERE SpanName = 'execute_tool exec_command'`);
        const shells = await store.query<{ ParentSpanId: string; command: string; status: string }>(
          `SELECT ParentSpanId, SpanAttributes['process.command_line'] AS command, SpanAttributes['process.exit.code'] AS status FROM otel_traces WHERE SpanName LIKE 'shell %' ORDER BY status`);
        const spanOf = (id: string) => calls.find((call) => call.call === id)?.SpanId;
        expect(shells).toEqual([
          { ParentSpanId: spanOf(callId), command: 'echo hooked', status: '0' },
          { ParentSpanId: spanOf(failingCallId), command: 'ls no-such-file', status: '2' },
        ]);

        await ccotel('uninstall-shell');
        await ccotel('uninstall-hooks');
        expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toBe(configBefore);
        expect(JSON.parse(readFileSync(join(codexHome, 'hooks.json'), 'utf8'))).toEqual(JSON.parse(hooksBefore));
      } finally {
        await server.close();
      }
    },
    180_000,
  );
});
