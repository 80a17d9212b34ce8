// The failure modes of DESIGN section 6 planted on the real Claude Code CLI, and a well-behaved twin of each
// (the same commands with nothing left behind, clean resumes, normal exits, permission prompts answered).
// Each states what it plants — mode, cause, and which call, process and port a detection must name — in code,
// never read back from what ccotel reports.
import type { Step, ToolCall } from '../harness/model-server.js';

export type FailureMode = 'orphan_process' | 'approval_scope' | 'signal_propagation' | 'output_truncation' | 'replay_divergence' | 'abandoned_session';

/** A failure a scenario plants, and what its detection must name besides the session. */
export interface Planted {
  mode: FailureMode;
  cause?: string;
  /** The planting call (the first tool call of the step marked `plants`). */
  call: boolean;
  /** The process: the one that wrote `planted.pid`, or the Claude Code process (`agent.pid`). */
  pid?: 'planted' | 'agent';
  /** The scenario's port. */
  port?: boolean;
}

export interface ScriptStep extends Step {
  /** Its first tool call plants the scenario's failures. */
  plants?: boolean;
}

export interface PrintRun {
  prompt: string;
  steps: ScriptStep[];
  /** Resume the session of the run before (`--resume`). */
  resume?: boolean;
}

/** An interactive session: the TUI in a tmux pane; `end` is how it goes away. */
export interface InteractiveScript {
  prompt: string;
  steps: ScriptStep[];
  /** The Bash call asks for permission (default mode) and is allowed once. */
  answer: 'allow-once';
  /** Wait for this on the screen before ending. */
  waitFor: string;
  /** `close-terminal`: the pane goes (SIGHUP, Claude Code ends the session); `terminal-dies`: the CLI is
   * killed and its pane goes at once — no SessionEnd can fire, and its terminal is gone. */
  end: 'close-terminal' | 'terminal-dies';
}

export interface FailureScenario {
  name: string;
  description: string;
  /** The planted scenario this one is the well-behaved twin of. */
  twinOf?: string;
  planted: Planted[];
  print?: (ctx: { port: number }) => PrintRun[];
  interactive?: InteractiveScript;
}

const USAGE = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

function bash(command: string): ToolCall {
  return { name: 'Bash', input: { command, description: 'Run a scenario command' } };
}

function call(command: string, extra: Partial<ScriptStep> = {}): ScriptStep {
  return { toolCalls: [bash(command)], usage: USAGE, ...extra };
}

const answer = (text: string): ScriptStep => ({ text, usage: USAGE });

/** One prompt, one Bash call, one answer. */
function oneCall(command: string, plants = true): () => PrintRun[] {
  return () => [{ prompt: 'Run the command.', steps: [call(command, { plants }), answer('Done.')] }];
}

/** A process detached from the call's process tree (double fork: re-parented to init), writing its pid. */
const ESCAPED_SLEEP = `(setsid sh -c 'echo $$ > planted.pid; exec sleep 300' >/dev/null 2>&1 &)`;
const nodeScript = (body: string) => `node -e "${body}"`;
const writePid = `require('fs').writeFileSync('planted.pid', String(process.pid))`;
const server = (port: number, then = '') => nodeScript(`require('http').createServer((q,s)=>s.end('ok')).listen(${port},'127.0.0.1',()=>{${writePid};${then}})`);
const busy = (ms: number) => nodeScript(`${writePid};setTimeout(()=>{},${ms})`);
const BIG_OUTPUT = 60_000;
/**
 * Wait (30 s at most) until Claude Code has written this call to its transcript: it writes rows from a queue, so a
 * CLI killed at once can leave no transcript at all on a busy machine (the call's row holds its command, so
 * `agent.pid`).
 */
const UNTIL_CALL_WRITTEN = `t="$HOME/.claude/projects/$(pwd | sed 's/[^a-zA-Z0-9]/-/g')"; for i in $(seq 300); do grep -qs agent.pid "$t"/*.jsonl && break; sleep 0.1; done`;

export const FAILURE_SCENARIOS: FailureScenario[] = [
  {
    name: 'server-left-running',
    description: 'A Bash call starts a setsid/nohup server on a loopback port and returns; the server outlives the call and the session.',
    planted: [
      { mode: 'orphan_process', call: true, pid: 'planted' },
      { mode: 'approval_scope', cause: 'listening', call: true, pid: 'planted', port: true },
    ],
    print: ({ port }) => oneCall(`setsid nohup ${server(port)} >/dev/null 2>&1 & sleep 1; echo started`)(),
  },
  {
    name: 'background-job-waited',
    twinOf: 'server-left-running',
    description: 'The same setsid/nohup job (no listener), waited for before the call returns.',
    planted: [],
    print: oneCall(`setsid nohup ${busy(1500)} >/dev/null 2>&1 & wait; echo finished`),
  },
  {
    name: 'listener-during-call',
    description: 'A Bash call runs a server on a loopback port for 4 s in the foreground, then it exits with the call.',
    planted: [{ mode: 'approval_scope', cause: 'listening', call: true, pid: 'planted', port: true }],
    print: ({ port }) => oneCall(server(port, 'setTimeout(()=>process.exit(0),4000)'))(),
  },
  {
    name: 'busy-during-call',
    twinOf: 'listener-during-call',
    description: 'The same 4 s foreground process, with no listener.',
    planted: [],
    print: oneCall(busy(4000)),
  },
  {
    name: 'interrupt-escaped-child',
    description: 'The user interrupts (SIGINT) while a Bash call runs; a child it detached from its process tree keeps running.',
    planted: [
      { mode: 'signal_propagation', call: true, pid: 'planted' },
      { mode: 'orphan_process', call: true, pid: 'planted' },
      { mode: 'approval_scope', cause: 'outlived', call: true, pid: 'planted' },
    ],
    print: () => [{ prompt: 'Run the long build.', steps: [call(`${ESCAPED_SLEEP}; sleep 0.5; kill -INT "$CLAUDE_PID"; sleep 5`, { plants: true })] }],
  },
  {
    name: 'interrupt-child-in-tree',
    twinOf: 'interrupt-escaped-child',
    description: 'The same interrupt; the child stayed in the call\'s process tree, which Claude Code kills.',
    planted: [],
    print: () => [{ prompt: 'Run the long build.', steps: [call(`sh -c 'echo $$ > planted.pid; exec sleep 300' & sleep 0.5; kill -INT "$CLAUDE_PID"; sleep 5`)] }],
  },
  {
    name: 'big-output',
    description: `A Bash call prints ${BIG_OUTPUT} characters: the transcript keeps a 2 KB preview, the hook sees it all.`,
    planted: [{ mode: 'output_truncation', call: true }],
    print: oneCall(`head -c ${BIG_OUTPUT} /dev/zero | tr '\\0' a; echo`),
  },
  {
    name: 'small-output',
    twinOf: 'big-output',
    description: 'The same command printing 600 characters.',
    planted: [],
    print: oneCall(`head -c 600 /dev/zero | tr '\\0' a; echo`),
  },
  {
    name: 'resume-with-process-left',
    description: 'A run leaves a detached process running; the session is resumed while it still runs.',
    planted: [
      { mode: 'replay_divergence', cause: 'processes_running', call: true, pid: 'planted' },
      { mode: 'orphan_process', call: true, pid: 'planted' },
      { mode: 'approval_scope', cause: 'outlived', call: true, pid: 'planted' },
    ],
    print: () => [
      { prompt: 'Start the watcher.', steps: [call(`${ESCAPED_SLEEP}; echo started`, { plants: true }), answer('Started.')] },
      { prompt: 'Is it still there?', resume: true, steps: [call('echo back'), answer('Back.')] },
    ],
  },
  {
    name: 'clean-resume-slow-start',
    twinOf: 'resume-with-process-left',
    description: 'A run leaves nothing; the session is resumed and the model thinks 40 s before its first Bash command.',
    planted: [],
    print: () => [
      { prompt: 'Say hello.', steps: [call('echo first'), answer('Hello.')] },
      { prompt: 'And again?', resume: true, steps: [call('echo back', { delayMs: 40_000 }), answer('Back.')] },
    ],
  },
  {
    name: 'agent-killed',
    description: 'The Claude Code process is SIGKILLed while its Bash call runs: no SessionEnd.',
    planted: [{ mode: 'abandoned_session', cause: 'killed', call: true, pid: 'agent' }],
    print: oneCall(`echo "$CLAUDE_PID" > agent.pid; ${UNTIL_CALL_WRITTEN}; kill -9 "$CLAUDE_PID"`),
  },
  {
    name: 'normal-exit',
    twinOf: 'agent-killed',
    description: 'The same call without the kill; the run ends normally.',
    planted: [],
    print: oneCall('echo "$CLAUDE_PID" > agent.pid'),
  },
  {
    name: 'interactive-terminal-dies',
    description: 'Interactive: a permission prompt allowed once, then, while the Bash call runs, the terminal dies with the CLI.',
    planted: [{ mode: 'abandoned_session', cause: 'tty_gone', call: true, pid: 'agent' }],
    interactive: {
      prompt: 'Run the long check.',
      // exec: the command's process is the one that wrote its pid, so it can be stopped afterwards.
      steps: [call('echo "$CLAUDE_PID" > agent.pid; echo $$ > planted.pid; exec sleep 60', { plants: true }), answer('Checked.')],
      answer: 'allow-once',
      waitFor: 'sleep 60',
      end: 'terminal-dies',
    },
  },
  {
    name: 'interactive-terminal-closed',
    twinOf: 'interactive-terminal-dies',
    description: 'Interactive: the same prompt allowed once; the call finishes, then the terminal is closed (SIGHUP: SessionEnd).',
    planted: [],
    interactive: {
      prompt: 'Run the quick check.',
      steps: [call('echo "$CLAUDE_PID" > agent.pid; sleep 1'), answer('Checked the thing.')],
      answer: 'allow-once',
      waitFor: 'Checked the thing.',
      end: 'close-terminal',
    },
  },
];
