import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  LAST_TURN_KINDS, Thread, TranscriptFile, TURN_KINDS, type Gen, type TurnKind,
} from './conversation.js';
import { ExpectedTally, type Expected } from './expected.js';
import { Rng } from './random.js';
import { BigContent, STYLES, stamp, type Envelope, type Row, type StyleName } from './rows.js';
import { TextPool } from './text.js';

export type { Expected } from './expected.js';

/**
 * `single-root`: everything under <root>/projects. `multi-root`: projects spread over three config
 * dirs — <root>, <root>/home/.claude and <root>/home/.config/claude — as on a host where
 * CLAUDE_CONFIG_DIR, ~/.claude and ~/.config/claude all hold transcripts.
 */
export type HostLayout = 'single-root' | 'multi-root';

export interface CorpusOptions {
  seed: number;
  /** Config dir to write (it gets projects/ and expected.json); emptied first. */
  root: string;
  /** Keep adding sessions until this many bytes are written (default: only the coverage sessions). */
  targetBytes?: number;
  /** Keep adding sessions until at least this many exist. */
  sessions?: number;
  hostLayout?: HostLayout;
  /** Multiplier for the large non-conversation rows (prompt snapshots, request shapes); 1 = real size. */
  contentScale?: number;
  /** When the first session starts (epoch ms); default 2026-08-01 08:00 UTC plus up to a day. */
  startMs?: number;
}

type Interlude =
  | 'compact' | 'compact-legacy'
  | 'meta-command' | 'meta-reminder' | 'meta-task-notification' | 'meta-skill'
  | 'unknown-type' | 'malformed' | 'not-object' | 'missing-fields';
type Step = TurnKind | Interlude;

interface FamilyPlan {
  style: StyleName;
  /** The first is the original process; each further one is a same-file resume (2.1). */
  segments: Step[][];
  /** Pre-2.1 resume: a new session file that replays the whole history, then these steps. */
  oldStyleResume?: Step[];
  /** 2.1 fork: a new session file copying the first `atTurn` turns (forkedFrom on each row), then these steps. */
  fork?: { atTurn: number; steps: Step[] };
  partialLastLine: boolean;
}

/** The first families cover every quirk, so even the smallest corpus holds all of them. */
const COVERAGE: FamilyPlan[] = [
  {
    style: 'v2.1',
    segments: [
      ['unknown-type', 'answer', 'parallel-tools', 'meta-command', 'deny-interactive', 'deny-rule', 'deny-print-mode', 'tool-error',
        'meta-reminder', 'interrupt-answer', 'interrupt-tool', 'malformed', 'api-error', 'subagent', 'compact', 'meta-task-notification',
        'tools', 'meta-skill', 'not-object', 'missing-fields', 'abandon-tool'],
      ['tools', 'subagent', 'abandon-silent'],
      ['answer'],
    ],
    fork: { atTurn: 3, steps: ['tools', 'answer'] },
    partialLastLine: false,
  },
  {
    style: 'v2.0',
    segments: [['subagent', 'tools', 'compact', 'interrupt-tool', 'answer']],
    oldStyleResume: ['tools', 'deny-interactive', 'answer'],
    partialLastLine: true,
  },
  {
    style: 'v1.0',
    segments: [['meta-command', 'subagent', 'answer', 'compact-legacy', 'tools', 'abandon-tool']],
    oldStyleResume: ['answer', 'malformed', 'tools'],
    partialLastLine: true,
  },
];

const PROJECT_CWDS = [
  '/home/dev/src/payments-api',
  '/home/dev/src/web_app.v2',
  '/home/dev/work/infra tools',
  '/srv/build/monorepo/packages/core',
  '/home/dev/src/payments-api/services/ledger',
];

const TURN_WEIGHTS: Record<Exclude<TurnKind, 'abandon-tool' | 'abandon-silent'>, number> = {
  answer: 20, tools: 30, 'parallel-tools': 6, 'deny-interactive': 2, 'deny-rule': 2, 'deny-print-mode': 2,
  'tool-error': 5, 'interrupt-answer': 2, 'interrupt-tool': 2, 'api-error': 2, subagent: 6,
};

const INTERLUDE_WEIGHTS: Record<Interlude, number> = {
  compact: 4, 'compact-legacy': 1, 'meta-command': 6, 'meta-reminder': 4, 'meta-task-notification': 2, 'meta-skill': 2,
  'unknown-type': 2, malformed: 1, 'not-object': 1, 'missing-fields': 1,
};

function randomSteps(rng: Rng, turns: number): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < turns; i++) {
    if (i > 0 && rng.chance(0.12)) steps.push(rng.weighted(INTERLUDE_WEIGHTS));
    steps.push(rng.weighted(TURN_WEIGHTS));
  }
  if (rng.chance(0.1)) steps.push(rng.pick(LAST_TURN_KINDS));
  return steps;
}

function randomPlan(rng: Rng): FamilyPlan {
  const style = rng.weighted<StyleName>({ 'v2.1': 70, 'v2.0': 20, 'v1.0': 10 });
  const modern = STYLES[style].modern;
  // Most sessions are short (the recorded `claude -p` runs are one or two prompts), a few are long.
  const turns0 = rng.weighted({ short: 70, medium: 25, long: 5 });
  const segments = [randomSteps(rng, turns0 === 'short' ? rng.int(1, 2) : turns0 === 'medium' ? rng.int(3, 6) : rng.int(7, 12))];
  if (modern && rng.chance(0.2)) for (let i = rng.int(1, 2); i > 0; i--) segments.push(randomSteps(rng, rng.int(1, 5)));
  const turns = segments[0].filter(isTurn).length;
  return {
    style,
    segments,
    oldStyleResume: !modern && rng.chance(0.15) ? randomSteps(rng, rng.int(1, 5)) : undefined,
    fork: modern && rng.chance(0.08) ? { atTurn: rng.int(1, turns), steps: randomSteps(rng, rng.int(1, 4)) } : undefined,
    partialLastLine: rng.chance(0.05),
  };
}

function isTurn(step: Step): step is TurnKind {
  return (TURN_KINDS as readonly string[]).includes(step);
}

function runStep(th: Thread, step: Step): void {
  if (isTurn(step)) th.turn(step);
  else if (step === 'compact' || step === 'compact-legacy') th.compaction(step === 'compact-legacy');
  else if (step.startsWith('meta-')) th.metaRows(step.slice('meta-'.length) as Parameters<Thread['metaRows']>[0]);
  else th.noise(step as Parameters<Thread['noise']>[0]);
}

interface Project {
  cwd: string;
  /** <config dir>/projects/<cwd with every non-alphanumeric character replaced by '-'> */
  dir: string;
}

const MINUTE = 60_000;

class CorpusWriter {
  private readonly gen: Gen;
  private clock: number;

  constructor(private readonly rng: Rng, gen: Gen, private readonly projects: Project[], startMs?: number) {
    this.gen = gen;
    // Sessions start every 1–30 minutes from 2026-08-01: a 1 GB corpus spans about six weeks.
    this.clock = startMs ?? Date.UTC(2026, 7, 1, 8, 0, 0) + rng.int(0, 24 * 60) * MINUTE;
  }

  private newSession(project: Project, style: StyleName, clock: number, keepHistory: boolean): Thread {
    const sessionId = this.rng.uuid();
    const env: Envelope = { sessionId, cwd: project.cwd, gitBranch: this.rng.pick(['main', 'feature/retry', 'HEAD']), style: STYLES[style] };
    const file = new TranscriptFile(this.gen, join(project.dir, `${sessionId}.jsonl`), keepHistory);
    this.gen.tally.sessions.add(sessionId);
    return new Thread(this.gen, file, env, clock, project.dir);
  }

  family(plan: FamilyPlan, project: Project): void {
    const { rng, tally } = this.gen;
    this.clock += rng.int(1, 30) * MINUTE;
    const keepHistory = plan.fork !== undefined || plan.oldStyleResume !== undefined;
    const main = this.newSession(project, plan.style, this.clock, keepHistory);
    const turnStarts: number[] = [];
    if (!STYLES[plan.style].modern) {
      // A leading row with its own timestamp, before anything a replay copies: the original's file
      // then always starts strictly earlier than any copy of it (see README, per-session tokens).
      main.metaRows('command');
      main.file.forgetHistory();
    }
    /** When each process of the session stopped, and how many turns the session had by then. */
    const processEnds: { turns: number; clock: number }[] = [];
    plan.segments.forEach((steps, i) => {
      if (i > 0) {
        main.resumeProcess(rng.int(30, 20 * 60) * MINUTE);
        tally.resumeSameFile++;
      }
      for (const step of steps) {
        if (isTurn(step)) turnStarts.push(main.file.history?.length ?? 0);
        runStep(main, step);
      }
      main.endOfProcess();
      processEnds.push({ turns: turnStarts.length, clock: main.clock });
    });
    const history = main.file.history ?? [];
    const endClock = main.clock;
    if (plan.partialLastLine) main.file.partialLine(stamp(main.env, main.parentUuid, { type: 'assistant', uuid: rng.uuid(), message: { role: 'assistant', content: [] } }));
    main.file.close(main.clock);

    if (plan.oldStyleResume) {
      const resumed = this.copySession(project, plan.style, history, endClock + rng.int(2, 600) * MINUTE, main.env.sessionId, false);
      tally.resumeNewFile++;
      this.continueCopy(resumed, plan.oldStyleResume);
    }
    if (plan.fork) {
      const { atTurn } = plan.fork;
      const prefix = history.slice(0, turnStarts[atTurn] ?? history.length);
      // Forked minutes after the process that wrote the copied turns stopped: when the original was
      // resumed later, its file is modified after the fork's (file times do not tell which is the copy).
      const forkedAt = (processEnds.find((p) => p.turns >= atTurn) ?? processEnds[processEnds.length - 1]).clock;
      const forked = this.copySession(project, plan.style, prefix, forkedAt + rng.int(1, 5) * MINUTE, main.env.sessionId, true);
      tally.forks++;
      this.continueCopy(forked, plan.fork.steps);
    }
  }

  /**
   * A new session file that starts with a copy of `rows` (same message ids, timestamps and text):
   * an old-style resume (fresh uuids) or a fork (same uuids, forkedFrom).
   */
  private copySession(project: Project, style: StyleName, rows: Row[], startMs: number, fromSessionId: string, fork: boolean): Thread {
    const { rng, tally } = this.gen;
    const th = this.newSession(project, style, startMs, false);
    let parent: string | null = null;
    let copiedMessages = false;
    /** Copied messages without requestId: ccusage counts them again in this session (see README). */
    const withoutRequestId = new Map<string, Row>();
    for (const row of rows) {
      const uuid = fork ? (row.uuid as string) : rng.uuid();
      const copy: Row = { ...row, parentUuid: parent, uuid, sessionId: th.env.sessionId };
      if ('logicalParentUuid' in row) copy.logicalParentUuid = parent;
      if (fork) {
        if (row.type === 'assistant') copy.requestSessionId = fromSessionId;
        copy.forkedFrom = { sessionId: fromSessionId, messageUuid: row.uuid };
      }
      th.file.row(copy);
      parent = uuid;
      copiedMessages ||= row.type === 'assistant';
      const message = row.message as Row | undefined;
      if (row.type === 'assistant' && row.requestId === undefined && message?.model !== '<synthetic>') withoutRequestId.set(message?.id as string, message?.usage as Row);
    }
    th.parentUuid = parent;
    for (const u of withoutRequestId.values()) {
      tally.ccusageExtra.input += u.input_tokens as number;
      tally.ccusageExtra.output += u.output_tokens as number;
      tally.ccusageExtra.cacheRead += u.cache_read_input_tokens as number;
      tally.ccusageExtra.cacheCreation += u.cache_creation_input_tokens as number;
    }
    if (copiedMessages) {
      tally.sessionsSharingMessages.add(fromSessionId);
      tally.sessionsSharingMessages.add(th.env.sessionId);
    }
    return th;
  }

  private continueCopy(th: Thread, steps: Step[]): void {
    for (const step of steps) runStep(th, step);
    th.endOfProcess();
    th.file.close(th.clock);
  }

  run(opts: CorpusOptions): void {
    COVERAGE.forEach((plan, i) => this.family(plan, this.projects[i % this.projects.length]));
    const targetBytes = opts.targetBytes ?? 0;
    const sessions = opts.sessions ?? 0;
    while (this.gen.tally.bytes < targetBytes || this.gen.tally.sessions.size < sessions) {
      this.family(randomPlan(this.rng), this.rng.pick(this.projects));
    }
  }
}

function encodeCwd(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, '-');
}

/** Writes a deterministic transcript tree under opts.root and returns (and writes) the exact expected answer. */
export async function generateCorpus(opts: CorpusOptions): Promise<Expected> {
  const root = resolve(opts.root);
  rmSync(join(root, 'projects'), { recursive: true, force: true });
  rmSync(join(root, 'home'), { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const configDirs = (opts.hostLayout ?? 'multi-root') === 'multi-root'
    ? [root, join(root, 'home', '.claude'), join(root, 'home', '.config', 'claude')]
    : [root];
  const projects = PROJECT_CWDS.map((cwd, i) => ({ cwd, dir: join(configDirs[i % configDirs.length], 'projects', encodeCwd(cwd)) }));

  const rng = new Rng(opts.seed);
  const tally = new ExpectedTally();
  const text = new TextPool(rng.fork());
  const big = new BigContent(rng.fork(), text, opts.contentScale ?? 1);
  const gen: Gen = { root, rng: rng.fork(), text, tally, big };
  new CorpusWriter(rng.fork(), gen, projects, opts.startMs).run(opts);

  const expected = tally.finish(opts.seed, configDirs);
  writeFileSync(join(root, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
  return expected;
}
