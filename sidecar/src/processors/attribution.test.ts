import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { advanceClock, assistant, correlate, MAIN, prompt, result, SESSION, spansNamed, toolUse, turnRoots } from '../../../test/generators/transcript-rows.js';
import { encode } from './encode/index.js';
import { normaliseRemoteUrl, Places, remoteUrlIn, repositoryOf, ticketOf } from './attribution.js';

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
const password = () => randomBytes(12).toString('base64url');

describe('normaliseRemoteUrl', () => {
  it('names a repository the same whichever way it was cloned, without credentials', () => {
    const secret = password();
    for (const url of [
      'git@github.com:acme/widgets.git',
      'ssh://git@github.com/acme/widgets.git',
      'ssh://git@github.com:22/acme/widgets',
      `https://ci-bot:${secret}@github.com/acme/widgets.git`,
      `https://${secret}@GitHub.com/acme/widgets/`,
      `https://github.com/acme/widgets.git?token=${secret}#x`,
      `ci:${secret}@github.com:acme/widgets.git`,
    ]) {
      expect(normaliseRemoteUrl(url), url).toBe('https://github.com/acme/widgets');
    }
  });

  it('keeps an http port and a local path, and keeps nothing it cannot read', () => {
    expect(normaliseRemoteUrl('http://git.local:3000/team/app.git')).toBe('http://git.local:3000/team/app');
    expect(normaliseRemoteUrl('/srv/git/app.git')).toBe('/srv/git/app');
    expect(normaliseRemoteUrl('file:///srv/git/app.git')).toBe('/srv/git/app');
    expect(normaliseRemoteUrl('')).toBeUndefined();
    expect(normaliseRemoteUrl(`ftp://u:${password()}@host/x`)).toBeUndefined();
    expect(normaliseRemoteUrl('not a url at all')).toBeUndefined();
  });
});

describe('remoteUrlIn', () => {
  it('reads origin\'s url from a git config (quoted, commented, other remotes beside it)', () => {
    const config = '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://x/up\n[remote "origin"]\n\tURL = "https://h/o/r.git" ; a comment\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n';
    expect(remoteUrlIn(config)).toBe('https://h/o/r.git');
    expect(remoteUrlIn('[remote "upstream"]\n\turl = https://x/up\n')).toBeUndefined();
  });
});

describe('repositoryOf', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-attribution-'));

  it('reads origin of the repository holding a directory, never its password', () => {
    const secret = password();
    const repo = join(root, 'with-password');
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    git(repo, 'init', '-q');
    git(repo, 'remote', 'add', 'origin', `https://dev:${secret}@git.example.com/acme/with-password.git`);
    expect(repositoryOf(repo)).toBe('https://git.example.com/acme/with-password');
    expect(repositoryOf(join(repo, 'src', 'deep'))).toBe('https://git.example.com/acme/with-password');
    expect(repositoryOf(repo)).not.toContain(secret);
  });

  it('reads a worktree\'s origin from its main repository', () => {
    const repo = join(root, 'main-repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    git(repo, 'remote', 'add', 'origin', 'git@github.com:acme/main-repo.git');
    git(repo, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'first');
    git(repo, 'worktree', 'add', '-q', join(root, 'a-worktree'));
    expect(repositoryOf(join(root, 'a-worktree'))).toBe('https://github.com/acme/main-repo');
  });

  it('finds none for a directory in no repository, a repository without origin, or a directory gone', () => {
    const plain = join(root, 'plain');
    mkdirSync(plain);
    expect(repositoryOf(plain)).toBeUndefined();
    const local = join(root, 'no-remote');
    mkdirSync(local);
    git(local, 'init', '-q');
    expect(repositoryOf(local)).toBeUndefined();
    // A removed project inside a repository: its parent's repository is not its own.
    const gone = join(root, 'with-password', 'removed-project');
    expect(repositoryOf(gone)).toBeUndefined();
  });

  it('reads no FIFO and no huge file as a .git file', () => {
    const odd = join(root, 'odd');
    mkdirSync(odd);
    execFileSync('mkfifo', [join(odd, '.git')]);
    expect(repositoryOf(odd)).toBeUndefined();
    rmSync(join(odd, '.git'));
    writeFileSync(join(odd, '.git'), `gitdir: ${'x'.repeat(2 << 20)}`);
    expect(repositoryOf(odd)).toBeUndefined();
  });
});

describe('tickets and places', () => {
  it('takes the ticket from a branch: the first group, else the whole match', () => {
    expect(ticketOf('feature/PROJ-123-retry', /[A-Z]+-\d+/)).toBe('PROJ-123');
    expect(ticketOf('fix/gh-42', /gh-(\d+)/)).toBe('42');
    expect(ticketOf('main', /[A-Z]+-\d+/)).toBeUndefined();
    expect(ticketOf('feature/PROJ-1', undefined)).toBeUndefined();
  });

  it('looks a directory up once, whatever the branch', () => {
    const asked: string[] = [];
    const places = new Places({ repositoryOf: (dir) => (asked.push(dir), 'https://h/r'), ticketPattern: /T-\d+/ });
    expect(places.of('/a', 'T-1')).toEqual({ cwd: '/a', repository: 'https://h/r', branch: 'T-1', ticket: 'T-1' });
    places.of('/a', 'main');
    places.of('/a', 'T-1');
    expect(asked).toEqual(['/a']);
  });
});

describe('attribution of a session\'s records', () => {
  const places = () => new Places({ repositoryOf: (dir) => (dir === '/work/app' ? 'https://h/acme/app' : undefined), ticketPattern: /[A-Z]+-\d+/ });
  const at = (cwd: string, gitBranch: string) => ({ cwd, gitBranch });

  it('puts the branch a row names on what follows it: a new branch mid-session moves the later turns', () => {
    const batch = correlate([[MAIN, [
      prompt('first', at('/work/app', 'main')),
      assistant('msg_1', 'req_1', [toolUse('toolu_1', 'Bash', { command: 'ls' })], { output_tokens: 1 }, 'tool_use', at('/work/app', 'main')),
      result('toolu_1', 'ok', false, undefined, at('/work/app', 'main')),
      assistant('msg_2', 'req_2', [{ type: 'text', text: 'done' }], { output_tokens: 2 }, 'end_turn', at('/work/app', 'main')),
      prompt('second', at('/work/app', 'feature/ABC-7-retry')),
      assistant('msg_3', 'req_3', [{ type: 'text', text: 'done' }], { output_tokens: 3 }, 'end_turn', at('/work/app', 'feature/ABC-7-retry')),
    ]]], places());
    const [first, second] = turnRoots(batch);
    const inTrace = (traceId: string) => [...batch.spans.filter((span) => span.traceId === traceId), ...batch.logs.filter((log) => log.traceId === traceId)];
    expect(inTrace(first.traceId).length).toBeGreaterThanOrEqual(4);
    for (const item of inTrace(first.traceId)) {
      expect(item.attributes).toMatchObject({ 'ccotel.cwd': '/work/app', 'vcs.repository.url.full': 'https://h/acme/app', 'vcs.ref.head.name': 'main' });
      expect(item.attributes['ccotel.ticket']).toBeUndefined();
    }
    for (const item of inTrace(second.traceId)) {
      expect(item.attributes).toMatchObject({ 'vcs.repository.url.full': 'https://h/acme/app', 'vcs.ref.head.name': 'feature/ABC-7-retry', 'ccotel.ticket': 'ABC-7' });
    }
    // Records outside any trace (the session's start) carry it too.
    const start = batch.logs.find((log) => log.eventName === 'ccotel.session.started');
    expect(start?.attributes['vcs.ref.head.name']).toBe('main');
  });

  it('names no repository for a directory in none, and the branch still', () => {
    const batch = correlate([[MAIN, [
      prompt('hello', at('/home/dev/scratch', 'HEAD')),
      assistant('msg_9', 'req_9', [{ type: 'text', text: 'hi' }], { output_tokens: 1 }, 'end_turn', at('/home/dev/scratch', 'HEAD')),
    ]]], places());
    for (const span of batch.spans) {
      expect(span.attributes['vcs.repository.url.full']).toBeUndefined();
      expect(span.attributes).toMatchObject({ 'ccotel.cwd': '/home/dev/scratch', 'vcs.ref.head.name': 'HEAD' });
    }
    expect(spansNamed(batch, 'chat ')).toHaveLength(1);
  });

  it('gives a join\'s record (which knows only the session) where the session is now', () => {
    advanceClock(1000);
    const out = encode([{ kind: 'SessionEnded', sessionId: SESSION, reason: 'exit', timeMs: Date.now(), hookFile: 'f' }],
      (sessionId) => (sessionId === SESSION ? { cwd: '/work/app', branch: 'main' } : undefined));
    expect(out.logs[0].attributes).toMatchObject({ 'session.id': SESSION, 'ccotel.cwd': '/work/app', 'vcs.ref.head.name': 'main' });
  });
});
