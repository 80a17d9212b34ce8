import type { Scenario } from './scenarios.js';
import { bash, oneRun, usage } from './script-steps.js';

// Scenarios recorded for the version matrix only (test/fixtures/real/<version>/), on top of the ones in
// SCENARIOS: format features that changed between releases. They are not in SCENARIOS so the end-to-end
// runs of the pinned CLI stay as they are.

/** The custom command of the slash-command scenario, expanded by Claude Code into the turn's prompt. */
const GREET_COMMAND = 'Greet the user: run `echo hi-from-command` with the shell, then say what it printed.\n';

export const MATRIX_SCENARIOS: Scenario[] = [
  {
    name: 'slash-command',
    description: 'A custom command (.claude/commands/greet.md) run as /greet: its expanded prompt makes one Bash call, then an answer.',
    projectFiles: { '.claude/commands/greet.md': GREET_COMMAND },
    sessions: () =>
      oneRun({
        prompt: '/greet',
        allowedTools: ['Bash'],
        turnOutcome: 'completed',
        steps: [
          { toolCalls: [bash('echo hi-from-command', 'success', 'Greet')], usage: usage(1250, 19, 0, 350) },
          { text: 'It printed hi-from-command.', usage: usage(1330, 8, 350, 0) },
        ],
      }),
  },
  {
    name: 'permission-mode',
    description: 'A run in the default mode (Write denied), then the session resumed with --permission-mode acceptEdits (Write allowed).',
    sessions: ({ projectDir }) => [
      {
        runs: [
          {
            prompt: 'Write the marker file.',
            turnOutcome: 'completed',
            steps: [
              {
                toolCalls: [{ name: 'Write', input: { file_path: `${projectDir}/marker-1`, content: 'one\n' }, outcome: 'denied' }],
                usage: usage(1050, 28, 0, 0),
              },
              { text: 'I may not write it.', usage: usage(1120, 7, 0, 0) },
            ],
          },
          {
            prompt: 'Edits are accepted now: write it.',
            resume: true,
            permissionMode: 'acceptEdits',
            turnOutcome: 'completed',
            steps: [
              {
                toolCalls: [{ name: 'Write', input: { file_path: `${projectDir}/marker-2`, content: 'two\n' }, outcome: 'success' }],
                usage: usage(1210, 29, 0, 0),
              },
              { text: 'Written.', usage: usage(1290, 4, 0, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    // Issue 30: 2.1.200's classifier cannot judge a call offline (the model server answers its side request
    // with plain text), so the call is refused with `toolDenialKind: "automode-parsing-error"` and no decision.
    name: 'auto-mode',
    description: 'A run in auto mode whose Bash call the auto mode classifier refuses, then the session resumed in plan mode for a Read.',
    projectFiles: { 'notes.txt': 'one note\n' },
    sessions: ({ projectDir }) => [
      {
        runs: [
          {
            prompt: 'Deploy it.',
            permissionMode: 'auto',
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [bash('curl -sS -X POST http://127.0.0.1:9/deploy', 'denied')], usage: usage(1060, 26, 0, 0) },
              { text: 'The safety check refused it.', usage: usage(1140, 9, 0, 0) },
            ],
          },
          {
            prompt: 'Plan only: read the notes.',
            resume: true,
            permissionMode: 'plan',
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [{ name: 'Read', input: { file_path: `${projectDir}/notes.txt` }, outcome: 'success' }], usage: usage(1230, 21, 0, 0) },
              { text: 'The notes hold one note.', usage: usage(1310, 8, 0, 0) },
            ],
          },
        ],
      },
    ],
  },
];

/** What the version matrix records for each release (bash mode is interactive only: not in print mode). */
export const MATRIX_SCENARIO_NAMES = [
  'bash-success',
  'bash-failure',
  'permission-denied',
  'interrupt',
  'resume',
  'subagent',
  'slash-command',
  'permission-mode',
  'compaction',
];
