// Tool outcomes of result rows as older releases wrote them (test/fixtures/real/<version>/, docs/VERSIONS.md).
import { describe, expect, it } from 'vitest';
import { toolVerdict } from './classify.js';

const errorResult = (content: string) => ({ type: 'tool_result', tool_use_id: 'toolu_1', content, is_error: true });
const REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";

describe('toolVerdict on the result rows of recorded releases', () => {
  it("2.1.17…2.1.258: Bash writing outside the working directories (\"touch in '<path>' was blocked\") is denied by a rule", () => {
    const text = "touch in '/tmp/project/marker-bash' was blocked. For security, Claude Code may only create or modify files in the allowed working directories for this session: '/tmp/project'.";
    expect(toolVerdict(errorResult(text), { toolUseResult: `Error: ${text}` })).toEqual({ outcome: 'denied', blockedBy: 'rule' });
  });

  it('2.1.258: a print-mode refusal marked user-rejected, with no decision, is denied by a rule; an interrupt stays interrupted', () => {
    const refusal = "Claude requested permissions to write to /tmp/project/marker-write, but you haven't granted it yet.";
    expect(toolVerdict(errorResult(refusal), { toolUseResult: `Error: ${refusal}`, toolDenialKind: 'user-rejected' })).toEqual({
      outcome: 'denied',
      blockedBy: 'rule',
    });
    expect(toolVerdict(errorResult(REJECTED), { toolUseResult: 'User rejected tool use', toolDenialKind: 'user-rejected' })).toEqual({
      outcome: 'interrupted',
    });
  });

  it('2.1.114: the marker on the line after the exit code of a killed command is an interrupt', () => {
    const text = 'Exit code 137\n[Request interrupted by user for tool use]';
    expect(toolVerdict(errorResult(text), { toolUseResult: `Error: ${text}` })).toEqual({ outcome: 'interrupted' });
  });

  it('a failed command that only mentions the marker mid-output is an error', () => {
    const text = 'Exit code 1\n[Request interrupted by user for tool use]\nprinted by the script';
    expect(toolVerdict(errorResult(text), { toolUseResult: `Error: ${text}` })).toEqual({ outcome: 'error' });
  });

  it('2.1.200: a denial kind other than user-rejected, with no decision and no before-run mark, is a denial, never an interrupt', () => {
    // Plan/auto mode when the classifier cannot evaluate the call (the row as 2.1.200 writes it).
    const classifier = 'Permission for this action was denied by the Claude Code auto mode classifier. Reason: the classifier could not evaluate the call.';
    expect(toolVerdict(errorResult(classifier), { toolUseResult: `Error: ${classifier}`, toolDenialKind: 'automode-parsing-error' })).toEqual({
      outcome: 'denied',
      blockedBy: 'classifier',
    });
    expect(toolVerdict(errorResult('Denied.'), { toolUseResult: 'Error: Denied.', toolDenialKind: 'permission-rule' })).toEqual({ outcome: 'denied', blockedBy: 'rule' });
    // A kind no release we recorded wrote: still a denial, of a source we cannot name.
    expect(toolVerdict(errorResult('No.'), { toolUseResult: 'Error: No.', toolDenialKind: 'some-future-kind' })).toEqual({ outcome: 'denied', blockedBy: 'unknown' });
  });
});

