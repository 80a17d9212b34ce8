import { describe, expect, it } from 'vitest';
import { diffViews, EMPTY_VIEW, mergeViews, settingsView, viewFingerprint } from './settings-view.js';

const digest = (value: string) => `d${value.length}`;
const view = (settings: unknown) => settingsView(settings, digest);

describe('settings view', () => {
  it('keeps the permission-relevant keys and nothing else', () => {
    const v = view({
      model: 'opus', theme: 'dark',
      permissions: { allow: ['Read', 'Bash(npm test:*)', 'Read'], deny: [], defaultMode: 'plan' },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard.sh' }] }], Stop: [{ hooks: [{ type: 'http', url: 'http://h/x' }] }] },
      env: { ANTHROPIC_BASE_URL: 'https://proxy.example', GITHUB_TOKEN: 'obviously-fake' },
      sandbox: { network: { allowUnixSockets: ['/run/x'] } },
    });
    expect(v).toEqual({
      sets: { 'permissions.allow': ['Bash(npm test:*)', 'Read'], hooks: ['PreToolUse Bash: guard.sh', 'Stop *: http://h/x'] },
      values: {
        'permissions.defaultMode': '"plan"',
        'env.ANTHROPIC_BASE_URL': '"https://proxy.example"',
        'env.GITHUB_TOKEN': '"[withheld:d16]"',
        'sandbox.network.allowUnixSockets': '["/run/x"]',
      },
    });
    expect(view({ model: 'sonnet', statusLine: { type: 'command' } })).toEqual(EMPTY_VIEW);
    expect(view('not an object')).toEqual(EMPTY_VIEW);
  });

  it('a change is the entries added, removed, set, unset and changed', () => {
    const before = view({ permissions: { allow: ['Read', 'Bash(ls)'], deny: ['Bash(rm:*)'], defaultMode: 'default' }, env: { A: '1', B: '2' } });
    const after = view({ permissions: { allow: ['Read', 'Bash(*)'], defaultMode: 'bypassPermissions' }, env: { B: '3', C: '4' }, disableAllHooks: true });
    expect(diffViews(before, after)).toEqual([
      { key: 'permissions.allow', op: 'added', value: 'Bash(*)' },
      { key: 'permissions.allow', op: 'removed', value: 'Bash(ls)' },
      { key: 'permissions.deny', op: 'removed', value: 'Bash(rm:*)' },
      { key: 'disableAllHooks', op: 'set', value: 'true' },
      { key: 'env.A', op: 'unset', previous: '"1"' },
      { key: 'env.B', op: 'changed', value: '"3"', previous: '"2"' },
      { key: 'env.C', op: 'set', value: '"4"' },
      { key: 'permissions.defaultMode', op: 'changed', value: '"bypassPermissions"', previous: '"default"' },
    ]);
    expect(diffViews(before, before)).toEqual([]);
  });

  it('the fingerprint ignores order and formatting, not content', () => {
    const a = view({ permissions: { allow: ['A', 'B'] }, env: { X: '1', Y: '2' } });
    const b = view({ env: { Y: '2', X: '1' }, permissions: { allow: ['B', 'A', 'A'] }, model: 'other' });
    expect(viewFingerprint(a)).toBe(viewFingerprint(b));
    expect(viewFingerprint(a)).not.toBe(viewFingerprint(view({ permissions: { allow: ['A'] }, env: { X: '1', Y: '2' } })));
    expect(viewFingerprint(view({ env: { GITHUB_TOKEN: 'one' } }))).not.toBe(viewFingerprint(view({ env: { GITHUB_TOKEN: 'three' } })));
  });

  it('merges rules as a union and values by precedence (the last file wins)', () => {
    const user = view({ permissions: { allow: ['Read'], defaultMode: 'plan' } });
    const managed = view({ permissions: { allow: ['Grep'], deny: ['WebFetch'], defaultMode: 'default' } });
    expect(mergeViews([user, managed])).toEqual({
      sets: { 'permissions.allow': ['Grep', 'Read'], 'permissions.deny': ['WebFetch'] },
      values: { 'permissions.defaultMode': '"default"' },
    });
  });
});
