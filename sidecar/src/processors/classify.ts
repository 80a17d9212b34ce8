// Small pure rules that decide what a transcript row means: real prompt or synthetic text, tool outcome,
// permission-block source. Kept apart from the correlator so each rule is easy to test and to change when
// Claude Code's wording changes.
import type { ContentBlock, TranscriptEntry } from './transcript-entry.js';

export type ToolOutcome = 'success' | 'error' | 'denied' | 'interrupted' | 'unanswered';
export type TurnOutcome = 'completed' | 'interrupted' | 'error' | 'abandoned';
/** Who refused a call: a hook, a permission rule (or print mode's no-prompt refusal), the user, auto mode's check. */
/** `unknown`: a denial kind no recorded release wrote (docs/VERSIONS.md lists those seen). */
export type BlockSource = 'hook' | 'rule' | 'user' | 'classifier' | 'unknown';

const SYNTHETIC_PROMPT_PREFIXES = [
  '<command-name>',
  '<command-message>',
  '<local-command-stdout>',
  '<local-command-stderr>',
  '<local-command-caveat>',
  '<system-reminder>',
  '<task-notification>',
  '<bash-input>',
  '<bash-stdout>',
  '<bash-stderr>',
  '[Request interrupted by user',
  'This session is being continued from a previous conversation',
];

const INTERRUPT_MARKER = '[Request interrupted by user';

/** The text of a user row when it is plain text (a string or only text blocks); undefined for tool results. */
export function userText(entry: TranscriptEntry): string | undefined {
  const content = entry.message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  if (content.some((block) => block?.type === 'tool_result')) return undefined;
  const texts = content.filter((block) => block?.type === 'text' && typeof block.text === 'string');
  if (texts.length === 0) return undefined;
  return texts.map((block) => block.text).join('\n');
}

/** The text the user typed, stripped of the system reminders Claude Code prepends to it. */
function withoutLeadingReminders(text: string): string {
  return text.replace(/^(\s*<system-reminder>[\s\S]*?<\/system-reminder>)+\s*/, '');
}

/** A real prompt starts a turn; meta rows, compaction summaries, command echoes and markers do not. */
export function realPromptText(entry: TranscriptEntry): string | undefined {
  if (entry.type !== 'user' || entry.isMeta || entry.isCompactSummary) return undefined;
  const text = userText(entry);
  if (text === undefined) return undefined;
  const typed = withoutLeadingReminders(text).trimStart();
  if (typed.length === 0 || isSyntheticText(typed)) return undefined;
  return typed;
}

/** Text Claude Code writes itself into user rows (command echoes, outputs, reminders, markers). */
function isSyntheticText(text: string): boolean {
  const typed = withoutLeadingReminders(text).trimStart();
  return SYNTHETIC_PROMPT_PREFIXES.some((prefix) => typed.startsWith(prefix));
}

/** What a non-meta user row typed at the prompt other than a prompt: a slash command or a bash-mode (`!`) command. */
export type UserInput = { kind: 'command'; name: string; args: string } | { kind: 'bash'; command: string };

const COMMAND_NAME = /<command-name>([^<]*)<\/command-name>/;
const COMMAND_ARGS = /<command-args>([^<]*)<\/command-args>/;
const BASH_INPUT = /^<bash-input>([\s\S]*?)<\/bash-input>/;

export function userInput(entry: TranscriptEntry): UserInput | undefined {
  if (entry.type !== 'user' || entry.isMeta) return undefined;
  const text = userText(entry)?.trimStart();
  if (text === undefined || !text.startsWith('<')) return undefined;
  const bash = BASH_INPUT.exec(text);
  if (bash) return { kind: 'bash', command: bash[1].trim() };
  const name = COMMAND_NAME.exec(text);
  if (!name || !text.startsWith('<command-')) return undefined;
  return { kind: 'command', name: name[1].trim(), args: (COMMAND_ARGS.exec(text)?.[1] ?? '').trim() };
}

/** The prompt a slash command expanded into (1.0.x, 2.0.x): a meta row of plain text right after the command. */
export function isCommandExpansion(entry: TranscriptEntry): boolean {
  if (entry.type !== 'user' || !entry.isMeta) return false;
  const text = userText(entry);
  return text !== undefined && text.trim().length > 0 && !isSyntheticText(text);
}

/** The output of a command (`<local-command-stdout>`, `<bash-stdout>` …): the end of a command the model does not answer. */
export function isCommandOutput(entry: TranscriptEntry): boolean {
  if (entry.type !== 'user' || entry.isMeta) return false;
  const text = userText(entry)?.trimStart() ?? '';
  return /^<(local-command-stdout|local-command-stderr|bash-stdout|bash-stderr)>/.test(text);
}

/** A result that says the user stopped the call: the marker first, or (2.1.114) on the last line after the exit code. */
function saysInterrupted(text: string): boolean {
  const lastLine = text.trimEnd().split('\n').at(-1) ?? '';
  return text.trimStart().startsWith(INTERRUPT_MARKER) || lastLine.startsWith(INTERRUPT_MARKER);
}

export function isInterruptMarker(entry: TranscriptEntry): boolean {
  if (entry.type !== 'user') return false;
  const text = userText(entry);
  return text !== undefined && text.trimStart().startsWith(INTERRUPT_MARKER);
}

export function toolResults(entry: TranscriptEntry): ContentBlock[] {
  const content = entry.message.content;
  if (entry.type !== 'user' || !Array.isArray(content)) return [];
  return content.filter((block) => block?.type === 'tool_result' && typeof block.tool_use_id === 'string');
}

export function toolUses(entry: TranscriptEntry): ContentBlock[] {
  const content = entry.message.content;
  if (entry.type !== 'assistant' || !Array.isArray(content)) return [];
  return content.filter((block) => block?.type === 'tool_use' && typeof block.id === 'string');
}

/** The text of a tool_result's content, which is a string or an array of blocks. */
export function resultText(block: ContentBlock): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === 'object' && part !== null && typeof part.text === 'string' ? part.text : ''))
      .join('\n');
  }
  return '';
}

// Wordings of a refused tool call: interactive rejection, permission rules, and print mode (formats spec 1.6, 6).
const USER_DENIAL = [/^The user doesn't want to (proceed with|take) this/, /^User rejected tool use/];
const RULE_DENIAL = [
  /^Permission to use .* has been denied/,
  / needs approval\b/,
  /^This command requires approval/,
  /requested permissions to .* but you haven't granted it yet/,
  // 2.1.17…2.1.258, Bash writing outside the working directories: "touch in '<path>' was blocked. For security, …"
  / in '.*' was blocked\. For security\b/,
];

function stripErrorPrefix(text: string): string {
  return text.replace(/^Error:\s*/, '').trimStart();
}

/** Who refused a call, when its result says it was refused. */
export function denialSource(text: string): BlockSource | undefined {
  const plain = stripErrorPrefix(text);
  if (USER_DENIAL.some((re) => re.test(plain))) return 'user';
  if (RULE_DENIAL.some((re) => re.test(plain))) return 'rule';
  return undefined;
}

/** Who refused a call, from the structured decision newer Claude Code writes on the result row. */
function decisionBlockSource(decision: TranscriptEntry['permissionDecision']): BlockSource | undefined {
  if (decision?.decision !== 'reject') return undefined;
  const source = decision.source ?? '';
  if (source === 'hook') return 'hook';
  if (source.startsWith('user')) return 'user';
  // Auto mode's refusals say `source: config` like rules do; the reason tells them apart.
  if (decision.reasonType === 'classifier' || decision.reasonCode?.startsWith('classifier:')) return 'classifier';
  return 'rule';
}

/** The `toolDenialKind` values recorded releases write (docs/VERSIONS.md, G), and who each says refused the call. */
const DENIAL_KIND_SOURCES = new Map<string, BlockSource>([
  ['user-rejected', 'user'],
  ['permission-rule', 'rule'],
  ['automode-unavailable', 'classifier'],
  ['automode-parsing-error', 'classifier'],
  ['automode-blocked', 'classifier'],
]);

/** A denial kind no recorded release wrote: still a refusal (by `unknown`), and counted so it shows. */
export function isUnknownDenialKind(kind: string | undefined): boolean {
  return kind !== undefined && !DENIAL_KIND_SOURCES.has(kind);
}

/** Who refused a call, from its denial kind, when no decision on the row says it. */
function denialKindSource(kind: string | undefined): BlockSource {
  return kind === undefined ? 'user' : (DENIAL_KIND_SOURCES.get(kind) ?? 'unknown');
}

export interface ToolVerdict {
  outcome: ToolOutcome;
  /** Set when the outcome is `denied`. */
  blockedBy?: BlockSource;
}

type ResultFields = Pick<TranscriptEntry, 'toolUseResult' | 'permissionDecision' | 'toolDenialKind' | 'toolDenialBeforeRun'>;

/**
 * How a call ended and, if it was refused, who refused it. The result row's structured fields decide first
 * (Claude Code 2.1.3xx): a rejecting `permissionDecision`; `toolDenialBeforeRun` (an interactive "No", which
 * carries no decision); a `toolDenialKind` with neither: `user-rejected` is a call cut short while it ran (Esc,
 * Ctrl+C: print and interactive mode write the same "rejected" text then) unless its text is a rule's refusal,
 * any other kind a refusal (auto mode's classifier, a rule, or a kind not seen yet: `unknown`); a
 * structured result saying `interrupted`. An accepted call is a success or an error. Only rows without these
 * fields (older releases) go by wording.
 */
export function toolVerdict(block: ContentBlock, entry: ResultFields): ToolVerdict {
  const { toolUseResult, permissionDecision: decision } = entry;
  const decidedBy = decisionBlockSource(decision);
  if (decidedBy) return { outcome: 'denied', blockedBy: decidedBy };
  if (entry.toolDenialBeforeRun) return { outcome: 'denied', blockedBy: denialKindSource(entry.toolDenialKind) };
  if (entry.toolDenialKind !== undefined) {
    // 2.1.258's print mode writes `user-rejected` on its no-prompt refusals too; their rule wording tells them apart.
    if (denialSource(resultText(block)) === 'rule') return { outcome: 'denied', blockedBy: 'rule' };
    // Only `user-rejected` is also what a call cut short while it ran carries; any other kind is a refusal.
    return entry.toolDenialKind === 'user-rejected' ? { outcome: 'interrupted' } : { outcome: 'denied', blockedBy: denialKindSource(entry.toolDenialKind) };
  }
  const structured = typeof toolUseResult === 'object' && toolUseResult !== null ? toolUseResult : undefined;
  if ((structured as { interrupted?: unknown } | undefined)?.interrupted === true) return { outcome: 'interrupted' };
  const text = resultText(block);
  if (saysInterrupted(text)) return { outcome: 'interrupted' };
  if (decision !== undefined) return { outcome: block.is_error === true ? 'error' : 'success' };
  if (toolUseResult === 'User rejected tool use') return { outcome: 'denied', blockedBy: 'user' };
  if (block.is_error !== true) return { outcome: 'success' };
  const wordedBy = denialSource(text);
  return wordedBy ? { outcome: 'denied', blockedBy: wordedBy } : { outcome: 'error' };
}
