// Settings changes and the rules in force, joined onto the sessions (issue 37). The settings watcher hands over
// each new version of a settings file; this join tells it as a change with the sessions that ran under the file
// and the session whose ConfigChange hook told the same change (Claude Code fires it when it notices the file
// itself; the watcher hands a change over only once the file stayed the same for a look, so the hook is usually in). Each turn gets the fingerprint of the rules in force in its
// directory when it started; the first turn of a session under a fingerprint also gets the rules themselves.
import type { CorrelationEvent, Join, Joined } from '../events.js';
import type { Ack } from '../model.js';
import { DEFAULT_AGENT } from '../semconv.js';
import type { RulesInForce, SettingsChanged } from '../events/settings.js';

/** A ConfigChange hook this close to a change's time is about it. */
const HOOK_WINDOW_MS = 10_000;
const HOOKS_KEPT = 100;
/** A session active this long before a change ran under it. */
const ACTIVE_MS = 30 * 60_000;
/** Sessions remembered (the least recently active are forgotten first): memory stays bounded. */
const SESSIONS_KEPT = 10_000;

/** What the join asks of the settings watcher. */
export interface SettingsRules {
  watchProject(dir: string): void;
  rulesAt(dir: string, timeMs: number): RulesInForce | undefined;
}

interface ConfigChangeHook {
  sessionId: string;
  path: string;
  timeMs: number;
}

export class SettingsJoin implements Join {
  readonly consumes = ['TurnEnded', 'HookFired'] as const;
  readonly produces = ['SettingsChangeTold', 'RulesApplied'] as const;
  private changes: SettingsChanged[] = [];
  private out: CorrelationEvent[] = [];
  private acks: Ack[] = [];
  private readonly hooks: ConfigChangeHook[] = [];
  /** Per session: its directory and last activity, and the fingerprints its turns ran under. */
  private readonly sessions = new Map<string, { cwd: string; lastMs: number; fingerprints: Set<string> }>();

  constructor(private readonly rules: SettingsRules) {}

  /** A new version from the settings watcher; `ack` once its record is accepted. */
  add(change: SettingsChanged, ack: Ack): void {
    this.changes.push(change);
    this.acks.push(ack);
  }

  observe(events: readonly CorrelationEvent[]): void {
    for (const event of events) {
      if (event.kind === 'HookFired' && event.name === 'ConfigChange' && typeof event.attributes.file_path === 'string') {
        this.hooks.push({ sessionId: event.sessionId, path: event.attributes.file_path, timeMs: event.timeMs });
        if (this.hooks.length > HOOKS_KEPT) this.hooks.shift();
      } else if (event.kind === 'TurnEnded' && event.place?.cwd && (event.agent ?? DEFAULT_AGENT) === DEFAULT_AGENT) {
        // Claude Code's settings: another agent's turns ran under rules of its own.
        const cwd = event.place.cwd;
        this.rules.watchProject(cwd);
        const session = this.sessions.get(event.sessionId) ?? { cwd, lastMs: 0, fingerprints: new Set<string>() };
        session.cwd = cwd;
        session.lastMs = Math.max(session.lastMs, event.endMs);
        this.sessions.delete(event.sessionId);
        this.sessions.set(event.sessionId, session);
        if (this.sessions.size > SESSIONS_KEPT) this.sessions.delete(this.sessions.keys().next().value!);
        const rules = this.rules.rulesAt(cwd, event.startMs);
        if (!rules) continue;
        const firstInSession = !session.fingerprints.has(rules.fingerprint);
        session.fingerprints.add(rules.fingerprint);
        this.out.push({ kind: 'RulesApplied', traceId: event.traceId, spanId: event.spanId, sessionId: event.sessionId, timeMs: event.startMs, rules, firstInSession });
      }
    }
  }

  drain(): Joined {
    for (const change of this.changes) {
      const hook = this.hookFor(change);
      this.out.push({ kind: 'SettingsChangeTold', change, sessions: this.sessionsUnder(change), ...(hook ? { toldBySession: hook.sessionId } : {}) });
    }
    this.changes = [];
    const joined = { events: this.out, acks: this.acks };
    this.out = [];
    this.acks = [];
    return joined;
  }

  finish(): void {}

  private hookFor(change: SettingsChanged): ConfigChangeHook | undefined {
    return this.hooks.findLast((hook) => hook.path === change.path && Math.abs(hook.timeMs - change.fromMs) <= HOOK_WINDOW_MS);
  }

  /** Sessions active shortly before the change, in the file's project for a project or local file. */
  private sessionsUnder(change: SettingsChanged): string[] {
    const project = change.scope === 'project' || change.scope === 'local' ? change.path.replace(/\/\.claude\/[^/]+$/, '') : undefined;
    return [...this.sessions.entries()]
      .filter(([, session]) => session.lastMs >= change.fromMs - ACTIVE_MS && (project === undefined || session.cwd === project))
      .map(([id]) => id)
      .sort();
  }
}
