import { randomUUID } from 'node:crypto';
import type { HookEventName } from '../../sidecar/src/install/hook-events.js';

/**
 * Claude Code hook stdin payloads, one per event kind Claude Code 2.1.332 fires, shaped after
 * the formats spec (sections 2.3 and 6). Values are fake but the field names, types and nesting
 * are the real ones, so the hook and the sidecar see what they will see in the field.
 */

export interface PayloadContext {
  sessionId: string;
  cwd: string;
}

export function hookPayloads(ctx: PayloadContext): Record<HookEventName, Record<string, unknown>> {
  const common = (event: HookEventName) => ({
    session_id: ctx.sessionId,
    prompt_id: randomUUID(),
    transcript_path: `/home/dev/.claude/projects/${ctx.cwd.replaceAll('/', '-')}/${ctx.sessionId}.jsonl`,
    cwd: ctx.cwd,
    permission_mode: 'default',
    effort: { level: 'medium' },
    hook_event_name: event,
  });
  const toolUseId = `toolu_01${randomUUID().replaceAll('-', '').slice(0, 22)}`;
  const bashInput = { command: 'grep -rn "TODO" src/ | head -n 5', description: 'Find TODOs — ünïcödé ✓' };
  return {
    SessionStart: { ...common('SessionStart'), source: 'startup', model: 'claude-sonnet-4-5', session_title: 'Fix the "flaky" test' },
    Setup: { ...common('Setup'), trigger: 'init' },
    InstructionsLoaded: { ...common('InstructionsLoaded'), file_path: `${ctx.cwd}/CLAUDE.md`, memory_type: 'Project', load_reason: 'session_start' },
    UserPromptSubmit: { ...common('UserPromptSubmit'), prompt: 'Run the tests\nand fix "what fails" \\ quickly 🚀' },
    UserPromptExpansion: { ...common('UserPromptExpansion'), expansion_type: 'slash_command', command_name: 'review', command_args: '--all', prompt: '/review --all' },
    MessageDisplay: { ...common('MessageDisplay'), delta: 'Running the tests', final: false, index: 0, message_id: 'msg_01abc', turn_id: randomUUID() },
    PreToolUse: { ...common('PreToolUse'), tool_name: 'Bash', tool_input: bashInput, tool_use_id: toolUseId },
    PreSkillShellCommand: { ...common('PreSkillShellCommand'), tool_name: 'Bash', tool_input: { command: 'ls -la' }, tool_use_id: toolUseId },
    PermissionRequest: {
      ...common('PermissionRequest'),
      tool_name: 'Bash',
      tool_input: bashInput,
      permission_suggestions: [{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'grep:*' }], behavior: 'allow', destination: 'localSettings' }],
    },
    PermissionDenied: { ...common('PermissionDenied'), tool_name: 'Bash', tool_input: { command: 'rm -rf build' }, tool_use_id: toolUseId, reason: 'auto mode classifier denied' },
    PostToolUse: {
      ...common('PostToolUse'),
      tool_name: 'Bash',
      tool_input: bashInput,
      tool_response: { stdout: 'src/a.ts:3: // TODO\tfix\u0001', stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
      tool_use_id: toolUseId,
      duration_ms: 41,
    },
    PostToolUseFailure: { ...common('PostToolUseFailure'), tool_name: 'Bash', tool_input: { command: 'false' }, tool_use_id: toolUseId, error: 'Exit code 1', is_interrupt: false, duration_ms: 12 },
    PostToolBatch: {
      ...common('PostToolBatch'),
      tool_calls: [{ tool_name: 'Bash', tool_input: bashInput, tool_use_id: toolUseId, tool_response: 'src/a.ts:3: // TODO' }],
    },
    Notification: { ...common('Notification'), message: 'Claude needs your permission to use Bash', title: 'Claude Code', notification_type: 'permission_prompt' },
    SubagentStart: { ...common('SubagentStart'), agent_id: 'a1b2c3', agent_type: 'general-purpose' },
    SubagentStop: {
      ...common('SubagentStop'),
      stop_hook_active: false,
      agent_id: 'a1b2c3',
      agent_type: 'general-purpose',
      agent_transcript_path: `/home/dev/.claude/projects/x/${ctx.sessionId}/subagents/agent-a1b2c3.jsonl`,
      last_assistant_message: 'Done.',
      background_tasks: [],
      session_crons: [],
    },
    TaskCreated: { ...common('TaskCreated'), task_id: 'task-1', task_subject: 'Write tests', task_description: 'Cover the parser' },
    TaskCompleted: { ...common('TaskCompleted'), task_id: 'task-1', task_subject: 'Write tests' },
    Stop: {
      ...common('Stop'),
      stop_hook_active: false,
      last_assistant_message: 'All tests pass.',
      background_tasks: [{ id: 'bash_1', type: 'shell', status: 'running', description: 'dev server', command: 'npm run dev' }],
      session_crons: [],
    },
    StopFailure: { ...common('StopFailure'), error: 'rate_limit', error_details: '429 Too Many Requests', last_assistant_message: '' },
    TeammateIdle: { ...common('TeammateIdle'), teammate_name: 'reviewer', team_name: 'core' },
    ConfigChange: { ...common('ConfigChange'), source: 'user_settings', file_path: '/home/dev/.claude/settings.json' },
    CwdChanged: { ...common('CwdChanged'), old_cwd: ctx.cwd, new_cwd: `${ctx.cwd}/packages/app` },
    DirectoryAdded: { ...common('DirectoryAdded'), directory: '/srv/shared' },
    FileChanged: { ...common('FileChanged'), file_path: `${ctx.cwd}/.envrc`, event: 'change' },
    WorktreeCreate: { ...common('WorktreeCreate'), name: 'feature-auth' },
    WorktreeRemove: { ...common('WorktreeRemove'), worktree_path: `${ctx.cwd}/.claude/worktrees/feature-auth` },
    PreCompact: { ...common('PreCompact'), trigger: 'auto', custom_instructions: '' },
    PostCompact: { ...common('PostCompact'), trigger: 'auto', compact_summary: 'Summary: fixed the parser; tests green.' },
    PreModelSwitch: { ...common('PreModelSwitch'), from_model: 'claude-sonnet-4-5', to_model: 'claude-opus-4-1' },
    PostModelSwitch: { ...common('PostModelSwitch'), from_model: 'claude-sonnet-4-5', to_model: 'claude-opus-4-1' },
    Elicitation: { ...common('Elicitation'), mcp_server_name: 'memory', message: 'Which project?', requested_schema: { type: 'object' } },
    ElicitationResult: { ...common('ElicitationResult'), mcp_server_name: 'memory', action: 'accept', content: { project: 'ccotel' } },
    SessionEnd: { ...common('SessionEnd'), reason: 'prompt_input_exit' },
  };
}
