import { mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexRoot } from './codex/rollout-tree.js';
import { discoverTranscripts, transcriptRoots } from './transcript-discovery.js';
import { TranscriptTree } from './transcript-tree.js';

function touch(path: string, content = '{}\n'): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, content);
}

describe('transcript discovery', () => {
  it('finds every root: each CLAUDE_CONFIG_DIR entry, ~/.claude and ~/.config/claude', () => {
    const base = mkdtempSync(join(tmpdir(), 'ccotel-roots-'));
    const home = join(base, 'home');
    for (const dir of [join(base, 'a'), join(base, 'b'), join(home, '.claude'), join(home, '.config', 'claude')]) mkdirSync(join(dir, 'projects'), { recursive: true });
    const roots = transcriptRoots({ CLAUDE_CONFIG_DIR: `${join(base, 'a')}, ${join(base, 'b')},${join(base, 'missing')}`, HOME: home }, home);
    expect(roots).toEqual([join(base, 'a', 'projects'), join(base, 'b', 'projects'), join(home, '.claude', 'projects'), join(home, '.config', 'claude', 'projects')]);
  });

  it('classifies main transcripts and subagents in the legacy and nested layouts, main ones first', async () => {
    const projects = join(mkdtempSync(join(tmpdir(), 'ccotel-disc-')), 'projects');
    const session = '5d1c0f7a-0000-4000-8000-00000000000a';
    touch(join(projects, '-work-app', 'agent-legacy1.jsonl'));
    touch(join(projects, '-work-app', `${session}.jsonl`));
    touch(join(projects, '-work-app', session, 'subagents', 'agent-n1.jsonl'));
    touch(join(projects, '-work-app', session, 'subagents', 'agent-n1.meta.json'), '{"agentType":"Explore"}');
    touch(join(projects, '-work-app', session, 'tool-results', 'big.jsonl'));
    touch(join(projects, '-work-app', 'notes.txt'));
    const found = await discoverTranscripts([projects]);
    expect(found).toHaveLength(3); // not tool-results/, not .txt
    expect(found[0]).toMatchObject({ kind: 'main', path: join(projects, '-work-app', `${session}.jsonl`) });
    expect(found.filter((f) => f.kind === 'subagent').map((f) => f.agentId).sort()).toEqual(['legacy1', 'n1']);
    expect(found.find((f) => f.agentId === 'n1')?.agentType).toBe('Explore');
  });

  it('finds Codex rollouts under a Codex home’s sessions dir, and only there, as files of the agent codex', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ccotel-codex-disc-'));
    const root = codexRoot(join(base, 'codex'));
    const rollout = join(root, '2026', '12', '04', 'rollout-2026-12-04T21-11-41-01a242e6-089b-7dd0-b043-2759fcaf119b.jsonl');
    touch(rollout);
    touch(join(root, '2026', '12', '04', 'notes.jsonl'));
    touch(join(root, '2026', '12', 'rollout-misplaced.jsonl'));
    touch(join(root, 'archive', '12', '04', 'rollout-x.jsonl'));
    touch(join(base, 'outside', 'rollout-secret.jsonl'));
    symlinkSync(join(base, 'outside', 'rollout-secret.jsonl'), join(root, '2026', '12', '04', 'rollout-link.jsonl'));
    const reported: string[] = [];
    const found = await discoverTranscripts([root], (message) => reported.push(message));
    expect(found.map(({ path, kind, agent }) => ({ path, kind, agent }))).toEqual([{ path: rollout, kind: 'main', agent: 'codex' }]);
    expect(reported).toEqual([expect.stringContaining('rollout-link.jsonl is a symlink to')]);
  });

  it('gives main transcripts oldest first, each followed by its own subagents; legacy agent files last', async () => {
    const app = join(mkdtempSync(join(tmpdir(), 'ccotel-order-')), 'projects', '-work-app');
    const written = (path: string, minute: number) => {
      touch(path);
      utimesSync(path, new Date(Date.UTC(2026, 7, 1, 8, minute)), new Date(Date.UTC(2026, 7, 1, 8, minute)));
      return path;
    };
    const legacy = written(join(app, 'agent-legacy1.jsonl'), 1);
    const oldAgent = written(join(app, 'old', 'subagents', 'agent-a2.jsonl'), 40); // a subagent outlived by a newer main
    const oldMain = written(join(app, 'old.jsonl'), 10);
    const newMain = written(join(app, 'new.jsonl'), 30);
    const newAgent = written(join(app, 'new', 'subagents', 'agent-b1.jsonl'), 20);
    const orphan = written(join(app, 'gone', 'subagents', 'agent-c1.jsonl'), 5); // its main transcript was deleted
    const found = await new TranscriptTree([join(app, '..')]).discover();
    expect(found.map((file) => file.path)).toEqual([oldMain, oldAgent, newMain, newAgent, legacy, orphan]);
  });

  it('follows no symlink: loops and links out of the root are reported once; a link to a transcript in the root is read there only', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ccotel-links-'));
    const projects = join(base, 'projects');
    const session = join(projects, '-work-app', 's1.jsonl');
    touch(session);
    touch(join(base, 'outside', 'private.jsonl'));
    symlinkSync('..', join(projects, '-work-app', 'loop'));
    symlinkSync(join(projects, '-work-app', 'pair-b'), join(projects, '-work-app', 'pair-a'));
    symlinkSync(join(projects, '-work-app', 'pair-a'), join(projects, '-work-app', 'pair-b'));
    symlinkSync(join(base, 'outside'), join(projects, '-linked-project'));
    symlinkSync(join(base, 'outside', 'private.jsonl'), join(projects, '-work-app', 'escape.jsonl'));
    symlinkSync(session, join(projects, '-work-app', 'alias.jsonl'));
    const logs: string[] = [];
    const tree = new TranscriptTree([projects], (message) => logs.push(message));
    expect((await tree.discover()).map((file) => file.path)).toEqual([session]);
    expect((await tree.discover()).map((file) => file.path)).toEqual([session]); // the walk `run` repeats when polling
    const reported = (name: string) => logs.filter((message) => message.startsWith(join(projects, name) + ' ')).length;
    expect([reported('-work-app/loop'), reported('-work-app/pair-a'), reported('-linked-project'), reported('-work-app/escape.jsonl'), reported('-work-app/alias.jsonl')]).toEqual([1, 1, 1, 1, 0]);
  });
});

