/**
 * The fields of the log records the sidecar emits, as the Sigma rules see them (flat: record fields plus
 * resource and record attributes). Rules may use only these: test/dashboards/alerts.test.ts checks it, and
 * checks `ccotel.secret.detected` against a record made by the sidecar's own mask processor.
 */

/** On every record: event.name (EventName), body, severity, resource host/user, session and record ids. */
export const COMMON_LOG_FIELDS = ['event.name', 'body', 'severity', 'host.name', 'user.name', 'service.name', 'session.id', 'ccotel.record.id'];

/** Attributes per event name (DESIGN §5–6; the shell and process ones are what the shell-log and process sources emit). */
export const SIDECAR_LOG_FIELDS: Record<string, string[]> = {
  'ccotel.secret.detected': ['rule', 'ccotel.secret.fingerprint', 'ccotel.secret.field', 'tool_use_id', 'ccotel.source.file'],
  'ccotel.permission.blocked': ['gen_ai.tool.name', 'tool_use_id', 'source', 'ccotel.permission.mode'],
  'ccotel.permission_mode.changed': ['ccotel.permission.mode', 'ccotel.permission.previous_mode'],
  'ccotel.session.started': ['source', 'ccotel.permission.mode'],
  'ccotel.session.ended': ['reason'],
  'ccotel.failure_mode.detected': ['mode', 'tool_use_id', 'process.pid', 'network.local.port'],
  'ccotel.shell.command': ['process.command_line', 'process.pid', 'process.exit.code', 'cwd', 'ccotel.shell.origin'],
  // One record per change of a settings file Claude Code reads (issue 37); lists are newline-separated, present when non-empty.
  'ccotel.settings.changed': [
    'ccotel.settings.file', 'ccotel.settings.scope', 'ccotel.settings.changes', 'ccotel.settings.first_seen',
    'ccotel.settings.allow.added', 'ccotel.settings.allow.removed', 'ccotel.settings.deny.added', 'ccotel.settings.deny.removed',
    'ccotel.settings.ask.added', 'ccotel.settings.ask.removed', 'ccotel.settings.default_mode', 'ccotel.settings.previous_default_mode',
    'ccotel.settings.hooks.added', 'ccotel.settings.hooks.removed', 'ccotel.settings.disable_all_hooks',
    'ccotel.settings.env.set', 'ccotel.settings.env.unset', 'ccotel.settings.fingerprint', 'ccotel.settings.previous_fingerprint',
    'file.owner.name', 'file.owner.id', 'ccotel.settings.sessions', 'ccotel.settings.git.commit', 'ccotel.settings.git.uncommitted',
  ],
};
