// Benchmark (not a test) of Claude Code's own `http` hook type against ccotel's command hook, with the
// real CLI against the scripted model server, printed as Markdown for docs/HOOKS.md.
//   npx vite-node bench/http-hook.ts [tool-calls=30] [rounds=5]
// 1. Cost to the agent: wall time of one print-mode run of N Bash calls with PreToolUse and PostToolUse
//    hooks, (a) none, (b) ccotel-hook.sh, (c) an http hook to a loopback receiver that spools the event
//    as the hook script does, rounds interleaved; per firing = (run − run without hooks) / firings.
// 2. What the agent shows when the receiver is down, with the http hook on every event ccotel spools:
//    print mode's stderr and the transcript's rows.
import { readdirSync, readFileSync, rmSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SPOOLED_EVENTS } from '../sidecar/src/install/hook-events.js';
import { spoolHookHandler } from '../sidecar/src/install/hooks.js';
import { HOOK_SCRIPT } from '../test/hook/run.js';
import { startModelServer, type Step } from '../test/harness/model-server.js';
import { runClaude } from '../test/harness/run-claude.js';
import { usage } from '../test/harness/script-steps.js';
import { median } from './stats.js';

const toolCalls = Number(process.argv[2] ?? 30);
const rounds = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'ccotel-bench-http-hook-'));
const HOOKED_EVENTS = ['PreToolUse', 'PostToolUse'];

/** A loopback receiver that writes each event into a spool file, as the hook script would. */
async function startSpoolingReceiver(spool: string): Promise<{ server: Server; url: string; received: () => number }> {
  mkdirSync(spool, { recursive: true });
  let received = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      writeFileSync(join(spool, `${process.pid}-${received++}.json`), Buffer.concat(chunks), { mode: 0o600 });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received: () => received };
}

type Handler = Record<string, unknown> | undefined;

function writeSettings(home: string, handler: Handler, events: readonly string[]): void {
  mkdirSync(join(home, '.claude'), { recursive: true });
  const hooks = handler ? Object.fromEntries(events.map((event) => [event, [{ hooks: [{ ...handler, timeout: 5 }] }]])) : {};
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ hooks }));
}

const steps = (): Step[] => [
  ...Array.from({ length: toolCalls }, (_, i) => ({ toolCalls: [{ name: 'Bash', input: { command: 'true', description: `call ${i}` } }], usage: usage(10 + i, 5) })),
  { text: 'done', usage: usage(100, 3) },
];

async function timedRun(name: string, handler: Handler, events: readonly string[] = HOOKED_EVENTS): Promise<{ ms: number; stderr: string; home: string }> {
  const home = join(dir, `home-${name}-${Math.random().toString(36).slice(2)}`);
  const projectDir = join(dir, 'project');
  mkdirSync(projectDir, { recursive: true });
  writeSettings(home, handler, events);
  const model = await startModelServer(steps());
  try {
    const result = await runClaude({ home, projectDir, prompt: 'run the calls', modelUrl: model.url, allowedTools: ['Bash'], timeoutMs: 300_000 });
    if (result.exitCode !== 0 || model.remainingSteps() !== 0) throw new Error(`${name}: exit ${result.exitCode}, ${model.remainingSteps()} steps left: ${result.stderr}`);
    return { ms: result.durationMs, stderr: result.stderr, home };
  } finally {
    await model.close();
  }
}

const receiver = await startSpoolingReceiver(join(dir, 'spool-http'));
const configs: Record<string, Handler> = {
  'no hooks': undefined,
  'ccotel-hook.sh (command)': spoolHookHandler(HOOK_SCRIPT, join(dir, 'spool-command')),
  'http hook to a loopback receiver': { type: 'http', url: receiver.url },
};
const times: Record<string, number[]> = Object.fromEntries(Object.keys(configs).map((name) => [name, []]));
await timedRun('warm-up', undefined); // the first start of the binary is several times slower
for (let round = 0; round < rounds; round++) {
  for (const [name, handler] of Object.entries(configs)) times[name].push((await timedRun(name, handler)).ms);
}
const firings = toolCalls * HOOKED_EVENTS.length;
const spooledPerRun = { command: readdirSync(join(dir, 'spool-command')).length / rounds, http: receiver.received() / rounds };
receiver.server.close();

// The receiver down: a port nothing listens on (the receiver's, now closed).
const down = await timedRun('down', { type: 'http', url: receiver.url }, SPOOLED_EVENTS);
const transcripts = join(down.home, '.claude', 'projects');
const downRows = readdirSync(transcripts, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.jsonl'))
  .flatMap((file) => readFileSync(join(transcripts, file), 'utf8').split('\n').filter(Boolean))
  .map((line) => JSON.parse(line) as { attachment?: { type?: string; stderr?: string } });
const errorRows = downRows.filter((row) => row.attachment?.type === 'hook_non_blocking_error');
rmSync(dir, { recursive: true, force: true });

const none = median(times['no hooks']);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`Machine: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Node ${process.version}, load ${load}; Claude Code 2.1.332 print mode, ${toolCalls} Bash calls, hooks on ${HOOKED_EVENTS.join(' and ')} (${firings} firings a run), median of ${rounds} interleaved rounds.

| hooks | run, ms (median) | per firing, ms | events spooled per run |
|---|---|---|---|
${Object.keys(configs)
  .map((name) => {
    const ms = median(times[name]);
    const handler = configs[name];
    if (!handler) return `| ${name} | ${ms} | — | — |`;
    return `| ${name} | ${ms} | ${((ms - none) / firings).toFixed(2)} | ${handler.type === 'http' ? spooledPerRun.http : spooledPerRun.command} |`;
  })
  .join('\n')}

With the receiver down (nothing listening; the http hook on all ${SPOOLED_EVENTS.length} events ccotel spools): exit 0, run ${down.ms} ms; ${errorRows.length} \`hook_non_blocking_error\` rows in the transcript (e.g. ${JSON.stringify(errorRows[0]?.attachment?.stderr ?? '')}); print mode's stderr: ${JSON.stringify(down.stderr.trim())}.`);
