// Settings (issue 37): a change of a settings file as a `ccotel.settings.changed` record (the structured diff, and
// per kind of entry the entries added or removed, one per line, so rules can select on them), and the rules in force
// at a turn: their fingerprint on its root span, and the first time in a session a `ccotel.settings.effective`
// record of the rules themselves.
import type { RulesApplied, SettingsChange, SettingsChangeTold } from '../../events.js';
import type { Attributes, SpanRecord, TelemetryBatch } from '../../model.js';
import { EVENTS } from '../../semconv.js';
import { logRecord } from './records.js';

/** The set entries with an attribute of their own when added or removed: `ccotel.settings.<name>.added|removed`. */
const LISTED_SETS: Record<string, string> = {
  'permissions.allow': 'allow',
  'permissions.deny': 'deny',
  'permissions.ask': 'ask',
  'permissions.additionalDirectories': 'additional_directories',
  hooks: 'hooks',
};
/** Modes in which tool calls run with less asking than `default`. */
const LOOSER_MODES = new Set(['"acceptEdits"', '"auto"', '"dontAsk"', '"bypassPermissions"']);

export function encodeSettingsChange({ change, sessions, toldBySession }: SettingsChangeTold, out: TelemetryBatch): void {
  const { changes } = change;
  const attributes: Attributes = {
    'ccotel.settings.file': change.path,
    'ccotel.settings.scope': change.scope,
    'ccotel.settings.changes': JSON.stringify(changes),
    'ccotel.settings.first_seen': change.previous === undefined,
    'ccotel.settings.present': change.present,
    'ccotel.settings.fingerprint': change.fingerprint,
    ...listedChanges(changes),
  };
  if (change.previous) attributes['ccotel.settings.previous_fingerprint'] = change.previous.fingerprint;
  if (sessions.length > 0) attributes['ccotel.settings.sessions'] = sessions.join('\n');
  if (change.owner) {
    attributes['file.owner.id'] = String(change.owner.uid);
    if (change.owner.name) attributes['file.owner.name'] = change.owner.name;
  }
  if (change.git) {
    attributes['ccotel.settings.git.commit'] = change.git.commit;
    attributes['ccotel.settings.git.author'] = change.git.author;
    attributes['ccotel.settings.git.uncommitted'] = change.git.uncommitted;
  }
  out.logs.push(logRecord({
    eventName: EVENTS.settingsChanged,
    severity: change.previous !== undefined && loosens(changes) ? 'WARN' : 'INFO',
    timeMs: change.fromMs,
    sessionId: toldBySession ?? '',
    attributes,
    body: changes.map(describe).join('\n'),
    idSeed: `${change.path}\u0000${change.previous?.fingerprint ?? ''}\u0000${change.fingerprint}\u0000${change.fromMs}`,
  }));
}

function listedChanges(changes: readonly SettingsChange[]): Attributes {
  const lists = new Map<string, string[]>();
  const add = (name: string, value: string) => lists.set(name, [...(lists.get(name) ?? []), value]);
  const attributes: Attributes = {};
  for (const { key, op, value, previous } of changes) {
    const listed = LISTED_SETS[key];
    if (listed && value !== undefined) add(`ccotel.settings.${listed}.${op}`, value);
    else if (key.startsWith('env.')) add(op === 'unset' ? 'ccotel.settings.env.unset' : 'ccotel.settings.env.set', key.slice('env.'.length));
    else if (key === 'permissions.defaultMode') {
      if (value !== undefined) attributes['ccotel.settings.default_mode'] = JSON.parse(value) as string;
      if (previous !== undefined) attributes['ccotel.settings.previous_default_mode'] = JSON.parse(previous) as string;
    } else if (key === 'disableAllHooks') attributes['ccotel.settings.disable_all_hooks'] = value ?? 'false';
  }
  for (const [name, values] of lists) attributes[name] = values.join('\n');
  return attributes;
}

/** A change that lets the agent do more without asking, or that blinds what watches it. */
function loosens(changes: readonly SettingsChange[]): boolean {
  return changes.some(({ key, op, value }) =>
    (key === 'permissions.allow' && op === 'added')
    || ((key === 'permissions.deny' || key === 'permissions.ask' || key === 'hooks') && op === 'removed')
    || (key === 'permissions.defaultMode' && value !== undefined && LOOSER_MODES.has(value))
    || (key === 'disableAllHooks' && value === 'true'));
}

function describe({ key, op, value, previous }: SettingsChange): string {
  if (op === 'added' || op === 'removed' || op === 'set') return `${key} ${op} ${value}`;
  if (op === 'unset') return `${key} unset (was ${previous})`;
  return `${key} changed ${previous} → ${value}`;
}

/** The fingerprint of the rules in force on the turn's root span. */
export function applyRules(span: SpanRecord, applied: RulesApplied | undefined): void {
  if (applied) span.attributes['ccotel.settings.fingerprint'] = applied.rules.fingerprint;
}

/** No record for no rules at all (Claude Code's defaults): the fingerprint of an empty view says so. */
export function encodeRulesApplied(applied: RulesApplied, out: TelemetryBatch): void {
  if (!applied.firstInSession || applied.rules.files.length === 0) return;
  const { rules, sessionId, traceId, spanId, timeMs } = applied;
  out.logs.push(logRecord({
    eventName: EVENTS.settingsEffective,
    severity: 'INFO',
    timeMs,
    sessionId,
    traceId,
    spanId,
    attributes: {
      'ccotel.settings.fingerprint': rules.fingerprint,
      'ccotel.settings.rules': JSON.stringify(rules.view),
      'ccotel.settings.files': rules.files.map((file) => `${file.scope} ${file.path} ${file.fingerprint}`).join('\n'),
    },
    idSeed: `${sessionId}\u0000${rules.fingerprint}`,
  }));
}
