// Issue 37: every change of a settings file Claude Code reads, while `run` follows: one `ccotel.settings.changed`
// record within 2 s with the exact diff and masked values, nothing for a rewrite that changes nothing, and the
// fingerprint of the rules in force on each turn.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPipeline, type FollowPipeline } from '../../sidecar/src/build-pipeline.js';
import { loadConfig } from '../../sidecar/src/config.js';
import type { LogRecord } from '../../sidecar/src/model.js';
import { CheckpointStore } from '../../sidecar/src/sources/checkpoints.js';
import { plantSecret } from '../generators/secrets.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { sessionPath, turnLines, waitFor } from '../reliability/transcripts.js';

const SESSION = 'settings-session';

describe('settings audit trail while run follows', () => {
  let root: string;
  let project: string;
  let configDir: string;
  let managedDir: string;
  let sink: MemorySink;
  let following: FollowPipeline;
  let transcript: string;
  let turns = 0;

  const changes = () => sink.received.logs.filter((log) => log.eventName === 'ccotel.settings.changed');
  const file = (scope: string) => ({
    user: join(configDir, 'settings.json'),
    project: join(project, '.claude', 'settings.json'),
    local: join(project, '.claude', 'settings.local.json'),
    managed: join(managedDir, 'managed-settings.json'),
  })[scope]!;
  const writeSettings = (scope: string, settings: unknown) => {
    mkdirSync(join(file(scope), '..'), { recursive: true });
    writeFileSync(file(scope), JSON.stringify(settings, null, 2));
  };
  /** Write settings and wait for the change record; fails after 2 s. */
  async function changeOf(scope: string, settings: unknown): Promise<LogRecord> {
    const before = changes().length;
    const startedMs = Date.now();
    writeSettings(scope, settings);
    await waitFor(`the change of ${scope} settings`, () => changes().length > before, 5_000);
    expect(Date.now() - startedMs).toBeLessThan(2_000);
    const fresh = changes().slice(before);
    expect(fresh).toHaveLength(1);
    return fresh[0];
  }
  /** A turn of the session in the project, starting `agoMs` before now. */
  const appendTurn = (agoMs = 0) => {
    const index = turns++;
    const lines = turnLines({ sessionId: SESSION, index, startMs: Date.now() - agoMs - index * 60_000 }).map((line) => line.replaceAll('/home/dev/project', project));
    mkdirSync(join(transcript, '..'), { recursive: true });
    writeFileSync(transcript, lines.map((line) => `${line}\n`).join(''), { flag: 'a' });
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ccotel-settings-'));
    project = join(root, 'work', 'project');
    configDir = join(root, 'claude');
    managedDir = join(root, 'managed');
    mkdirSync(project, { recursive: true });
    transcript = sessionPath(configDir, SESSION, project.replaceAll('/', '-'));
    const env = { HOME: root, CCOTEL_STATE_DIR: join(root, 'state'), CCOTEL_CONFIG: 'none', CCOTEL_MANAGED_SETTINGS_DIR: managedDir, CCOTEL_FLUSH_INTERVAL_MS: '200' };
    const config = loadConfig({ store: '', idleMs: 1_000 }, env);
    sink = new MemorySink();
    following = buildPipeline(config, { mode: 'follow', sinks: [sink], roots: [join(configDir, 'projects')], configDirs: [configDir], checkpoints: new CheckpointStore(config.paths.checkpointDir, 'test') });
    await following.start();
    appendTurn(4_000);
    await waitFor('the first turn', () => sink.received.spans.some((span) => span.name === 'invoke_agent claude-code'), 20_000);
  });

  afterAll(async () => {
    await following?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it.each(['user', 'project', 'local', 'managed'])('records each kind of change of the %s settings, exactly', async (scope) => {
    // Created while followed: a change from no file (not a first sight of a file that was there).
    const first = await changeOf(scope, { model: 'opus', permissions: { allow: ['Read'], deny: ['Bash(rm:*)'] } });
    expect(first.attributes).toMatchObject({ 'ccotel.settings.scope': scope, 'ccotel.settings.file': file(scope), 'ccotel.settings.first_seen': false, 'ccotel.settings.present': true });
    expect(JSON.parse(String(first.attributes['ccotel.settings.changes']))).toEqual([
      { key: 'permissions.allow', op: 'added', value: 'Read' },
      { key: 'permissions.deny', op: 'added', value: 'Bash(rm:*)' },
    ]);

    const loosened = await changeOf(scope, {
      model: 'opus',
      permissions: { allow: ['Read', 'Bash(*)'], defaultMode: 'bypassPermissions' },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard.sh' }] }] },
      env: { ANTHROPIC_BASE_URL: 'https://proxy.example' },
      disableAllHooks: true,
    });
    expect(loosened.severity).toBe('WARN');
    expect(loosened.attributes).toMatchObject({
      'ccotel.settings.first_seen': false,
      'ccotel.settings.allow.added': 'Bash(*)',
      'ccotel.settings.deny.removed': 'Bash(rm:*)',
      'ccotel.settings.default_mode': 'bypassPermissions',
      'ccotel.settings.hooks.added': 'PreToolUse Bash: guard.sh',
      'ccotel.settings.env.set': 'ANTHROPIC_BASE_URL',
      'ccotel.settings.disable_all_hooks': 'true',
      'ccotel.settings.previous_fingerprint': first.attributes['ccotel.settings.fingerprint'],
    });
    expect(loosened.attributes['ccotel.settings.sessions']).toBe(SESSION);

    // Only the model and the layout change: nothing to record.
    const recorded = changes().length;
    writeFileSync(file(scope), JSON.stringify({ disableAllHooks: true, env: { ANTHROPIC_BASE_URL: 'https://proxy.example' }, model: 'sonnet',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ command: 'guard.sh', type: 'command' }] }] }, permissions: { defaultMode: 'bypassPermissions', allow: ['Bash(*)', 'Read'] } }));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(changes()).toHaveLength(recorded);
    const unset = await changeOf(scope, { model: 'sonnet', permissions: { allow: ['Read'] } });
    expect(JSON.parse(String(unset.attributes['ccotel.settings.changes']))).toEqual([
      { key: 'hooks', op: 'removed', value: 'PreToolUse Bash: guard.sh' },
      { key: 'permissions.allow', op: 'removed', value: 'Bash(*)' },
      { key: 'disableAllHooks', op: 'unset', previous: 'true' },
      { key: 'env.ANTHROPIC_BASE_URL', op: 'unset', previous: '"https://proxy.example"' },
      { key: 'permissions.defaultMode', op: 'unset', previous: '"bypassPermissions"' },
    ]);
  });

  it('masks secret values and withholds credentials by name', async () => {
    const secret = plantSecret('github-token').text;
    const record = await changeOf('user', { permissions: { allow: ['Read'] }, env: { GITHUB_TOKEN: secret, NOTE: secret }, apiKeyHelper: `echo ${secret}` });
    const text = JSON.stringify(record);
    expect(text).not.toContain(secret);
    expect(record.attributes['ccotel.settings.env.set']).toBe('GITHUB_TOKEN\nNOTE');
    expect(String(record.attributes['ccotel.settings.changes'])).toContain('[withheld:');
  });

  it('each turn carries the fingerprint of the rules in force when it started, and the rules are recorded once per fingerprint', async () => {
    const turnSpans = () => sink.received.spans.filter((span) => span.name === 'invoke_agent claude-code');
    writeSettings('project', { permissions: { allow: ['Grep'] } });
    await waitFor('the project change', () => changes().some((log) => String(log.attributes['ccotel.settings.changes']).includes('Grep')), 5_000);
    appendTurn();
    await waitFor('the second turn', () => turnSpans().length >= 2, 20_000);
    writeSettings('project', { permissions: { allow: ['Grep', 'Glob'] } });
    await waitFor('the second project change', () => changes().some((log) => String(log.attributes['ccotel.settings.changes']).includes('Glob')), 5_000);
    appendTurn();
    await waitFor('the third turn', () => turnSpans().length >= 3, 20_000);
    const [, second, third] = turnSpans().sort((a, b) => a.startMs - b.startMs).map((span) => span.attributes['ccotel.settings.fingerprint']);
    expect(second).toMatch(/^[0-9a-f]{16}$/);
    expect(third).toMatch(/^[0-9a-f]{16}$/);
    expect(third).not.toBe(second);
    const effective = sink.received.logs.filter((log) => log.eventName === 'ccotel.settings.effective');
    const rulesOf = (fingerprint: unknown) => JSON.parse(String(effective.find((log) => log.attributes['ccotel.settings.fingerprint'] === fingerprint)!.attributes['ccotel.settings.rules'])) as { sets: Record<string, string[]> };
    expect(rulesOf(third).sets['permissions.allow']).toContain('Glob');
    expect(rulesOf(second).sets['permissions.allow']).not.toContain('Glob');
  });
});
