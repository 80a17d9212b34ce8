import { describe, expect, it } from 'vitest';
import { compareVersions, isNativeRelease, parseVersion } from './claude-releases.js';
import { agentCall } from './scenarios.js';

describe('Claude Code releases', () => {
  it('orders versions numerically, not as text', () => {
    const sorted = ['2.1.17', '1.0.128', '2.1.114', '1.0.24', '2.0.0', '1.0.98'].sort(compareVersions);
    expect(sorted).toEqual(['1.0.24', '1.0.98', '1.0.128', '2.0.0', '2.1.17', '2.1.114']);
    expect(compareVersions('2.1.332', '2.1.332')).toBe(0);
    expect(() => parseVersion('2.1')).toThrow(/not a Claude Code version/);
  });

  it('runs cli.js up to 2.1.112 and the native binary from 2.1.113', () => {
    expect(['1.0.24', '2.1.17', '2.1.112'].map(isNativeRelease)).toEqual([false, false, false]);
    expect(['2.1.113', '2.1.114', '2.1.332'].map(isNativeRelease)).toEqual([true, true, true]);
  });

  it("scripts the subagent call with each era's tool and inputs", () => {
    const input = { description: 'd', prompt: 'p' };
    expect(agentCall('1.0.24', input)).toEqual({ name: 'Task', input });
    expect(agentCall('2.1.17', input)).toEqual({ name: 'Task', input: { ...input, subagent_type: 'general-purpose' } });
    expect(agentCall('2.1.114', input)).toEqual({ name: 'Agent', input: { ...input, subagent_type: 'general-purpose', run_in_background: false } });
    expect(agentCall(undefined, input).name).toBe('Agent');
  });
});
