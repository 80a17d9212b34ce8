import { plantSecret, SECRET_KINDS, type PlantedText } from '../generators/secrets.js';
import { compareVersions, FIRST_AGENT_TOOL } from './claude-releases.js';
import type { Step, ToolCall } from './model-server.js';
import { bash, usage } from './script-steps.js';
import { MATRIX_SCENARIOS } from './matrix-scenarios.js';

// The scenarios the real CLI is driven through. Each one is a script for the model server plus what
// the script implies — turn outcomes, tool calls with their outcomes, token totals, resumes, denials —
// stated here in code, never read back from what ccotel (or Claude Code) reports.

export type TurnOutcome = 'completed' | 'interrupted' | 'error' | 'abandoned';
export type ToolOutcome = 'success' | 'error' | 'denied' | 'interrupted' | 'unanswered';

export interface ScriptedToolCall extends ToolCall {
  /** What this call must end as. */
  outcome: ToolOutcome;
}

export interface ScriptedStep extends Step {
  toolCalls?: ScriptedToolCall[];
  /** The request comes from a subagent (started by an Agent call of an earlier step). */
  subagent?: boolean;
  /**
   * A request outside the conversation (the summary /compact asks for): Claude Code counts it in its
   * own telemetry (query_source "auxiliary") but writes no transcript row for it.
   */
  auxiliary?: boolean;
}

export interface RunScript {
  prompt: string;
  steps: ScriptedStep[];
  /** `--allowedTools` for this run; a call to a tool left out is denied in print mode. */
  allowedTools?: string[];
  /** Resume the session of the previous run (`--resume <its session id>`). */
  resume?: boolean;
  /** `--permission-mode` for this run. */
  permissionMode?: string;
  /** null for a slash command Claude Code runs itself (/compact): not a prompt, so no turn. */
  turnOutcome: TurnOutcome | null;
}

/** One Claude Code session: its first run and any resumes. */
export interface SessionScript {
  runs: RunScript[];
}

export interface ScenarioContext {
  projectDir: string;
  /** A free loopback port, for the scenario that leaves a server running. */
  port: number;
  /** The Claude Code release that runs it; undefined for the pinned devDependency. */
  version?: string;
}

export interface Scenario {
  name: string;
  description: string;
  /** Files created in the project directory before the first run. */
  projectFiles?: Record<string, string>;
  /** Several sessions run at the same time. */
  sessions(ctx: ScenarioContext): SessionScript[];
  /** Set when a Bash call leaves a process listening on ctx.port; it writes its pid to this project file. */
  backgroundPidFile?: string;
  /** The random parts of secrets this scenario puts in prompts and tool output: none may reach a sink. */
  plantedSecrets?: string[];
}

export interface TokenTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

export interface SessionExpectation {
  turns: TurnOutcome[];
  toolCalls: { tool: string; outcome: ToolOutcome; subagent: boolean }[];
  /** Tokens of the conversation's requests (what transcripts hold). */
  tokens: TokenTotals;
  /** Tokens of auxiliary requests (compaction summaries): in native telemetry only. */
  auxiliaryTokens: TokenTotals;
  /** Model requests the script answers (the agent loop and subagents; side requests excluded). */
  modelRequests: number;
  /** Those that are part of the conversation (not auxiliary): one transcript message, one chat span each. */
  conversationRequests: number;
  resumes: number;
  denials: number;
  subagents: number;
}

/** The subagent tool's names: `Task` before 2.1.x renamed it `Agent`. */
const AGENT_TOOLS = new Set(['Agent', 'Task']);

/** Everything a session's script implies. */
export function expectationOf(session: SessionScript): SessionExpectation {
  const steps = session.runs.flatMap((run) => run.steps);
  const toolCalls = steps.flatMap((step) =>
    (step.toolCalls ?? []).map((call) => ({ tool: call.name, outcome: call.outcome, subagent: step.subagent === true })),
  );
  return {
    turns: session.runs.flatMap((run) => (run.turnOutcome === null ? [] : [run.turnOutcome])),
    toolCalls,
    tokens: tokenTotals(steps.filter((step) => !step.auxiliary)),
    auxiliaryTokens: tokenTotals(steps.filter((step) => step.auxiliary)),
    modelRequests: steps.length,
    conversationRequests: steps.filter((step) => !step.auxiliary).length,
    resumes: session.runs.filter((run) => run.resume).length,
    denials: toolCalls.filter((call) => call.outcome === 'denied').length,
    subagents: toolCalls.filter((call) => AGENT_TOOLS.has(call.tool)).length,
  };
}

function sum<T>(items: T[], value: (item: T) => number): number {
  return items.reduce((total, item) => total + value(item), 0);
}

function tokenTotals(steps: ScriptedStep[]): TokenTotals {
  return {
    input: sum(steps, (s) => s.usage.input_tokens),
    output: sum(steps, (s) => s.usage.output_tokens),
    cacheRead: sum(steps, (s) => s.usage.cache_read_input_tokens),
    cacheCreation: sum(steps, (s) => s.usage.cache_creation_input_tokens),
  };
}



/**
 * The subagent tool: `Task` {description, prompt[, subagent_type]} until 2.1.x renamed it `Agent` (offered
 * from 2.1.63; scripted from 2.1.114, a `Task` call still runs before), whose agents run in the background by default; in the foreground the script's
 * order is the request order.
 */
export function agentCall(version: string | undefined, input: { description: string; prompt: string }): ToolCall {
  if (version === undefined || compareVersions(version, FIRST_AGENT_TOOL) >= 0) {
    return { name: 'Agent', input: { ...input, subagent_type: 'general-purpose', run_in_background: false } };
  }
  return { name: 'Task', input: compareVersions(version, '1.0.51') >= 0 ? { ...input, subagent_type: 'general-purpose' } : input };
}

const NOTES = 'alpha line\nbeta line\ngamma line\n';

// Fresh secrets every time this module is loaded: every kind the generator knows, half of them typed
// into the prompt, half in a project file that Read and Bash then print as tool output.
const PROMPT_SECRETS: PlantedText[] = SECRET_KINDS.filter((_, i) => i % 2 === 0).map(plantSecret);
const FILE_SECRETS: PlantedText[] = SECRET_KINDS.filter((_, i) => i % 2 === 1).map(plantSecret);
const SECRETS_FILE = 'deploy.env';

export const SCENARIOS: Scenario[] = [
  {
    name: 'bash-success',
    description: 'One prompt, one successful Bash call that prints the session id and TRACEPARENT it inherits, then an answer.',
    sessions: () => [
      {
        runs: [
          {
            prompt: 'Print a greeting with the shell.',
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [
              {
                text: 'I will run echo.',
                toolCalls: [bash('echo hello-from-harness; echo "session=$CLAUDE_CODE_SESSION_ID"; echo "traceparent=$TRACEPARENT"', 'success')],
                usage: usage(1200, 40, 300, 150),
              },
              { text: 'The shell printed the greeting.', usage: usage(1350, 12, 450, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'bash-failure',
    description: 'A Bash call that writes to stderr and exits 3 (PostToolUseFailure), then an answer.',
    sessions: () => [
      {
        runs: [
          {
            prompt: 'Run the check script.',
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [bash('echo "check failed" >&2; exit 3', 'error')], usage: usage(1100, 30, 200, 100) },
              { text: 'The check failed with exit code 3.', usage: usage(1230, 15, 300, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'file-tools',
    description: 'Write a new file, Read, Edit, Grep and Glob, one call per step.',
    projectFiles: { 'notes.txt': NOTES },
    sessions: ({ projectDir }) => [
      {
        runs: [
          {
            prompt: 'Tidy up the notes.',
            // Naming Grep and Glob here is also what makes 2.1.332 offer them (they are opt-in).
            allowedTools: ['Read', 'Write', 'Edit', 'Grep', 'Glob'],
            turnOutcome: 'completed',
            steps: [
              {
                toolCalls: [{ name: 'Write', input: { file_path: `${projectDir}/todo.txt`, content: 'buy milk\n' }, outcome: 'success' }],
                usage: usage(2000, 50, 0, 800),
              },
              {
                toolCalls: [{ name: 'Read', input: { file_path: `${projectDir}/notes.txt` }, outcome: 'success' }],
                usage: usage(2100, 25, 800, 0),
              },
              {
                toolCalls: [
                  {
                    name: 'Edit',
                    input: { file_path: `${projectDir}/notes.txt`, old_string: 'beta line', new_string: 'BETA LINE' },
                    outcome: 'success',
                  },
                ],
                usage: usage(2200, 60, 900, 0),
              },
              {
                toolCalls: [{ name: 'Grep', input: { pattern: 'line', path: projectDir, output_mode: 'content' }, outcome: 'success' }],
                usage: usage(2300, 20, 1000, 0),
              },
              { toolCalls: [{ name: 'Glob', input: { pattern: '*.txt', path: projectDir }, outcome: 'success' }], usage: usage(2400, 18, 1100, 0) },
              { text: 'Notes tidied.', usage: usage(2500, 8, 1200, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'parallel-tools',
    description: 'One response with three tool calls at once (two Bash, one Read).',
    projectFiles: { 'notes.txt': NOTES },
    sessions: ({ projectDir }) => [
      {
        runs: [
          {
            prompt: 'Gather three facts at once.',
            allowedTools: ['Bash', 'Read'],
            turnOutcome: 'completed',
            steps: [
              {
                text: 'Running three lookups in parallel.',
                toolCalls: [
                  bash('echo first', 'success', 'Print first'),
                  bash('echo second', 'success', 'Print second'),
                  { name: 'Read', input: { file_path: `${projectDir}/notes.txt` }, outcome: 'success' },
                ],
                usage: usage(1500, 90, 0, 400),
              },
              { text: 'All three came back.', usage: usage(1700, 11, 400, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'permission-denied',
    description: 'Print mode with no tool allowed: a Bash call and a Write call are denied (permission_denials).',
    sessions: ({ projectDir }) => [
      {
        runs: [
          {
            prompt: 'Create the marker files.',
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [bash(`touch ${projectDir}/marker-bash`, 'denied')], usage: usage(900, 25, 0, 0) },
              {
                toolCalls: [{ name: 'Write', input: { file_path: `${projectDir}/marker-write`, content: 'x\n' }, outcome: 'denied' }],
                usage: usage(950, 30, 0, 0),
              },
              { text: 'I was not allowed to create them.', usage: usage(1000, 10, 0, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'resume',
    description: 'A session with one Bash call, then the same session resumed (--resume) for a second prompt.',
    sessions: () => [
      {
        runs: [
          {
            prompt: 'Count the files.',
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [bash('ls | wc -l', 'success', 'Count files')], usage: usage(1000, 20, 0, 500) },
              { text: 'There are no files.', usage: usage(1100, 9, 500, 0) },
            ],
          },
          {
            prompt: 'And what did you find before?',
            resume: true,
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [bash('pwd', 'success', 'Show directory')], usage: usage(1300, 14, 600, 0) },
              { text: 'Before, there were no files.', usage: usage(1400, 10, 700, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'subagent',
    description: 'An Agent (general-purpose) call whose subagent runs one Bash call; then the main answer.',
    sessions: ({ version }) => {
      const agent = agentCall(version, { description: 'Check the date', prompt: 'Run date and report it.' });
      return [
        {
          runs: [
            {
              prompt: 'Ask a helper to check the date.',
              allowedTools: ['Bash', agent.name],
              turnOutcome: 'completed',
              steps: [
                {
                  toolCalls: [{ ...agent, outcome: 'success' }],
                  usage: usage(3000, 70, 0, 1000),
                },
                { subagent: true, toolCalls: [bash('date -u +%Y', 'success', 'Print year')], usage: usage(800, 22, 0, 0) },
                { subagent: true, text: 'The year is printed above.', usage: usage(850, 9, 0, 0) },
                { text: 'The helper checked the date.', usage: usage(3200, 12, 1000, 0) },
              ],
            },
          ],
        },
      ];
    },
  },
  {
    name: 'background-process',
    description: 'A Bash call that leaves a setsid/nohup server listening on a loopback port after the session ends.',
    backgroundPidFile: 'background.pid',
    sessions: ({ port }) => [
      {
        runs: [
          {
            prompt: 'Start the dev server in the background.',
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [
              {
                toolCalls: [
                  bash(
                    // The server writes its own pid once listening, whatever setsid/nohup did with forks.
                    `setsid nohup node -e "require('http').createServer((q,s)=>s.end('ok')).listen(${port},'127.0.0.1',()=>require('fs').writeFileSync('background.pid',String(process.pid)))" >/dev/null 2>&1 & sleep 1; echo started`,
                    'success',
                    'Start a server in the background',
                  ),
                ],
                usage: usage(1000, 60, 0, 0),
              },
              { text: 'The server is running in the background.', usage: usage(1100, 11, 0, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'concurrent-sessions',
    description: 'Three sessions in the same project at the same time, one Bash call each.',
    sessions: () =>
      [1, 2, 3].map((n) => ({
        runs: [
          {
            prompt: `Session ${n}: say your number.`,
            allowedTools: ['Bash'],
            turnOutcome: 'completed' as const,
            steps: [
              { toolCalls: [bash(`echo number-${n}`, 'success', 'Print number')], usage: usage(1000 * n, 10 * n, 0, 0) },
              { text: `I am number ${n}.`, usage: usage(1000 * n + 100, n, 0, 0) },
            ],
          },
        ],
      })),
  },
  {
    name: 'secrets',
    description: 'A prompt holding secrets, and a project file of secrets printed by Read and by Bash (secrets made at run time).',
    projectFiles: { [SECRETS_FILE]: FILE_SECRETS.map((s) => s.text).join('\n') + '\n' },
    plantedSecrets: [...PROMPT_SECRETS, ...FILE_SECRETS].flatMap((s) => s.secrets),
    sessions: ({ projectDir }) => [
      {
        runs: [
          {
            prompt: `Check these settings and ${SECRETS_FILE} for mistakes:\n${PROMPT_SECRETS.map((s) => s.text).join('\n')}`,
            allowedTools: ['Bash', 'Read'],
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [{ name: 'Read', input: { file_path: `${projectDir}/${SECRETS_FILE}` }, outcome: 'success' }], usage: usage(4100, 33, 0, 2000) },
              { toolCalls: [bash(`cat ${SECRETS_FILE}`, 'success', 'Print the env file')], usage: usage(4300, 21, 2000, 700) },
              { text: 'Both hold live credentials; rotate them.', usage: usage(4500, 13, 2700, 0) },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'interrupt',
    description: 'The user interrupts (SIGINT, as Ctrl+C does) while a Bash call runs; print mode aborts the turn.',
    sessions: () => [
      {
        runs: [
          {
            prompt: 'Run the long build.',
            allowedTools: ['Bash'],
            turnOutcome: 'interrupted',
            steps: [
              {
                text: 'Starting the build.',
                // The Bash tool's shell knows Claude Code's pid: the call interrupts its own agent mid-run.
                // Releases before 2.1.x set no CLAUDE_PID: there the shell's parent is Claude Code.
                toolCalls: [bash('kill -INT "${CLAUDE_PID:-$PPID}"; sleep 3; echo build-finished', 'interrupted', 'Run the build')],
                usage: usage(1400, 35, 0, 600),
              },
            ],
          },
        ],
      },
    ],
  },
  {
    name: 'compaction',
    description: 'A turn with a Bash call, then /compact on the resumed session (one summary request), then one more prompt.',
    sessions: () => [
      {
        runs: [
          {
            prompt: 'List the project.',
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [
              { toolCalls: [bash('ls -a', 'success', 'List files')], usage: usage(1600, 17, 0, 900) },
              { text: 'The project is empty.', usage: usage(1700, 8, 900, 0) },
            ],
          },
          {
            prompt: '/compact',
            resume: true,
            turnOutcome: null,
            steps: [
              {
                auxiliary: true,
                // The <summary> block is what Claude Code keeps; without it, it asks a second time.
                text: '<analysis>One listing.</analysis>\n<summary>\n1. Primary Request: list the project. It was empty.\n</summary>',
                usage: usage(2600, 140, 0, 0),
              },
            ],
          },
          {
            prompt: 'Was it empty?',
            resume: true,
            allowedTools: ['Bash'],
            turnOutcome: 'completed',
            steps: [{ text: 'Yes, it was empty.', usage: usage(900, 7, 0, 300) }],
          },
        ],
      },
    ],
  },
];

export function scenarioNamed(name: string): Scenario {
  const all = [...SCENARIOS, ...MATRIX_SCENARIOS];
  const scenario = all.find((s) => s.name === name);
  if (!scenario) throw new Error(`no scenario named ${name}; known: ${all.map((s) => s.name).join(', ')}`);
  return scenario;
}
