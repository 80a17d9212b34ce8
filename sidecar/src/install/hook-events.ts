/** Every hook event Claude Code 2.1.332 accepts in settings.json (the list in its settings schema). */
export const CLAUDE_CODE_HOOK_EVENTS = [
  'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'Notification', 'UserPromptSubmit',
  'UserPromptExpansion', 'SessionStart', 'SessionEnd', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop',
  'PreCompact', 'PostCompact', 'PreModelSwitch', 'PostModelSwitch', 'PermissionRequest', 'PermissionDenied',
  'Setup', 'TeammateIdle', 'TaskCreated', 'TaskCompleted', 'Elicitation', 'ElicitationResult', 'ConfigChange',
  'WorktreeCreate', 'WorktreeRemove', 'InstructionsLoaded', 'CwdChanged', 'FileChanged', 'DirectoryAdded',
  'MessageDisplay', 'PreSkillShellCommand',
] as const;

export type HookEventName = (typeof CLAUDE_CODE_HOOK_EVENTS)[number];

/**
 * A configured WorktreeCreate/WorktreeRemove hook replaces Claude Code's own git worktree handling
 * (the hook must create the worktree and print its path), so a spooling hook there would break
 * `--worktree` and the EnterWorktree tool. ccotel never registers these.
 */
export const BEHAVIOUR_REPLACING_EVENTS: readonly HookEventName[] = ['WorktreeCreate', 'WorktreeRemove'];

/** The events install-hooks registers the spool hook for. */
export const SPOOLED_EVENTS: readonly HookEventName[] = CLAUDE_CODE_HOOK_EVENTS.filter(
  (event) => !BEHAVIOUR_REPLACING_EVENTS.includes(event),
);

/**
 * Seconds Claude Code lets the hook run. The hook takes milliseconds; the bound only matters if the
 * spool sits on a hung filesystem, and a timed-out hook never blocks the agent.
 */
export const HOOK_TIMEOUT_SECONDS = 5;
