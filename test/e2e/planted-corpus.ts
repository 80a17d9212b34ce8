// A generated transcript corpus (test/generator) with secrets planted where they turn up in real use: prompts,
// tool inputs (Bash commands, file contents), tool results and `toolUseResult.stdout`, split over the text
// blocks of one message, placed right at and across the content cap, repeated, and in lines the sidecar cannot
// parse. The hook spool and shell log are generated afterwards from the planted transcripts, so the same secrets
// reach UserPromptSubmit prompts, PreToolUse tool_input, PostToolUse tool_response and shell `cmd`s; then broken
// spool files and shell log lines holding secrets are added.
//
// `clean: true` writes the same corpus (same seed, same places) with innocuous text of the same kind
// (code, hashes, git SHAs, UUIDs, base64 images, trace ids) where the secrets were: every mask in its output
// is a false positive. Secret values are fresh random values on every run (test/generators/secrets.ts).
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCorpus } from '../generator/corpus.js';
import { generateHooksAndShell } from '../generator/hooks-shell.js';
import { negativeText, plantSecret, SECRET_KINDS, wrap, WRAPPINGS, type PlantedText, type SecretKind } from '../generators/secrets.js';

export interface PlantOptions {
  seed: number;
  /** Gets `corpus/` (config dirs), `spool/` and `shell/`. */
  root: string;
  sessions: number;
  /** Innocuous text instead of secrets. */
  clean?: boolean;
  /** The content cap the sidecar runs with: secrets are placed across it. */
  capLength: number;
}

/** Where a text was planted (counts per place, to show the corpus covers them all). */
export type Place =
  | 'prompt' | 'prompt-blocks' | 'prompt-at-cap'
  | 'tool-input' | 'bash-command' | 'bash-command-at-cap'
  | 'tool-result' | 'tool-result-blocks' | 'tool-result-at-cap' | 'tool-use-result'
  | 'assistant-text'
  | 'malformed-line' | 'malformed-line-at-keep-limit'
  | 'hook-dead-letter' | 'shell-log-malformed' | 'shell-cmd-cut';

/**
 * The way a planted secret reaches the sidecar, for telling which path leaks: the conversation (transcript
 * rows, and the hook payloads and shell commands generated from them), transcript lines it cannot parse,
 * broken hook spool files, shell log lines that are not records, and shell `cmd`s the shell script cut.
 */
export type SecretPath = 'conversation' | 'skipped-transcript-line' | 'hook-dead-letter' | 'skipped-shell-line' | 'cut-shell-command';

const PATH_OF: Record<Place, SecretPath> = {
  prompt: 'conversation', 'prompt-blocks': 'conversation', 'prompt-at-cap': 'conversation',
  'tool-input': 'conversation', 'bash-command': 'conversation', 'bash-command-at-cap': 'conversation',
  'tool-result': 'conversation', 'tool-result-blocks': 'conversation', 'tool-result-at-cap': 'conversation', 'tool-use-result': 'conversation',
  'assistant-text': 'conversation',
  'malformed-line': 'skipped-transcript-line', 'malformed-line-at-keep-limit': 'skipped-transcript-line',
  'hook-dead-letter': 'hook-dead-letter', 'shell-log-malformed': 'skipped-shell-line', 'shell-cmd-cut': 'cut-shell-command',
};

export interface PlantedCorpus {
  configDirs: string[];
  home: string;
  /** Generated hook spool and shell log (copy them into a state dir: the sidecar consumes the spool). */
  spoolDir: string;
  shellLogDir: string;
  /** The random part of every planted secret (empty when clean), by the path it takes. */
  secrets: Record<SecretPath, string[]>;
  kinds: Partial<Record<SecretKind, number>>;
  places: Partial<Record<Place, number>>;
  /** `planted-ref-<n>`: the tag written just before each use of the n-th repeated secret. */
  repeatTags: string[];
  /** Texts planted in all (secrets or, when clean, their innocuous stand-ins). */
  planted: number;
}

/** Characters of a skipped line the pipeline keeps in its `ccotel.record.skipped` body (sidecar/src/pipeline.ts). */
const SKIPPED_LINE_KEEP = 2048;
/** Kinds used for the repeated secrets: each appears several times, in several places. */
const REPEATED_KINDS: SecretKind[] = ['github-token', 'aws-secret-access-key', 'jwt', 'slack-token', 'private-key-short'];
/**
 * Token prefixes the generator counts as part of the secret: the same in every token of a kind, so an 8-character
 * piece made mostly of one (`glpat-R2`) turns up by chance next to other text. Only the random rest is scanned for.
 */
const FIXED_PREFIX = /^(?:gh[pousr]_|glpat-|AKIA|51)/;
/** Plain prose of fixed width: JSON escaping leaves it as is, so offsets can be computed. */
const PAD_UNIT = 'build step ok; ';

function pad(length: number): string {
  return PAD_UNIT.repeat(Math.ceil(Math.max(0, length) / PAD_UNIT.length)).slice(0, Math.max(0, length));
}

/** Hands out texts to plant: every kind in turn, every wrapping in turn, now and then a repeated secret. */
class Planter {
  readonly secrets: Record<SecretPath, string[]> = {
    conversation: [], 'skipped-transcript-line': [], 'hook-dead-letter': [], 'skipped-shell-line': [], 'cut-shell-command': [],
  };
  readonly kinds: Partial<Record<SecretKind, number>> = {};
  readonly places: Partial<Record<Place, number>> = {};
  readonly repeats: PlantedText[];
  private count = 0;
  private repeatUses = 0;

  constructor(private readonly clean: boolean) {
    // Repeats go only to conversation places (prompts, commands, tool results).
    this.repeats = REPEATED_KINDS.map((kind) => this.make(kind, 'conversation'));
  }

  private make(kind: SecretKind, path: SecretPath): PlantedText {
    if (this.clean) return { kind, text: negativeText(), secrets: [] };
    const planted = plantSecret(kind);
    this.secrets[path].push(...planted.secrets.map((secret) => secret.replace(FIXED_PREFIX, '')));
    return planted;
  }

  /** A fresh text of the next kind (or, where a repeat fits, a repeated one behind its tag). */
  take(place: Place, repeatable = false): PlantedText {
    this.count++;
    this.places[place] = (this.places[place] ?? 0) + 1;
    if (repeatable && this.count % 5 === 0) {
      const index = this.repeatUses++ % this.repeats.length;
      const repeat = this.repeats[index];
      this.kinds[repeat.kind] = (this.kinds[repeat.kind] ?? 0) + 1;
      return { ...repeat, text: `planted-ref-${index}: ${repeat.text}` };
    }
    const kind = SECRET_KINDS[this.count % SECRET_KINDS.length];
    this.kinds[kind] = (this.kinds[kind] ?? 0) + 1;
    return this.make(kind, PATH_OF[place]);
  }

  /** The next text, plain, inside a JSON string, or JSON inside a JSON string. */
  takeWrapped(place: Place, repeatable = false): string {
    const planted = this.take(place, repeatable);
    return wrap(planted.text, WRAPPINGS[this.count % WRAPPINGS.length]);
  }

  get planted(): number {
    return this.count;
  }
}

/** Where in a planted text its secret starts: the first random part, or (clean) its first word, which JSON leaves as is. */
function anchorOf(planted: PlantedText): string {
  return planted.secrets[0] ?? /[A-Za-z0-9]{4,}/.exec(planted.text)?.[0] ?? planted.text;
}

/**
 * The pad length that puts `anchor` at `at` in `build(pad)`. JSON escaping before the anchor shifts it, so
 * adjust and rebuild (the pad itself is never escaped).
 */
function padFor(build: (pad: string) => string, anchor: string, at: number): string {
  let length = at;
  for (let attempt = 0; attempt < 4; attempt++) {
    const index = build(pad(length)).indexOf(anchor);
    if (index === at) return pad(length);
    length += at - index;
  }
  throw new Error(`cannot place ${anchor} at ${at}`);
}

/** Where the secret starts relative to the cut (`cap - 1`, before the ellipsis): just across it, at it, just after. */
class CapPlacer {
  private count = 0;

  constructor(private readonly cut: number) {}

  next(anchor: string): number {
    const before = [0, 1, 4, 7, 8, 9, 16, anchor.length - 8, anchor.length - 1, anchor.length, -1];
    return this.cut - before[this.count++ % before.length];
  }
}

type Json = Record<string, unknown>;
type Block = Json & { type?: string; text?: string; content?: unknown; input?: Json; name?: string };

const SYNTHETIC_PROMPT = /^(<|\[Request interrupted|This session is being continued)/;

/** Split a text in two at a line break (a PEM key stays whole once the blocks are joined with newlines). */
function halves(text: string): [string, string] {
  const lines = text.split('\n');
  if (lines.length < 2) return [text, ''];
  const middle = Math.ceil(lines.length / 2);
  return [lines.slice(0, middle).join('\n'), lines.slice(middle).join('\n')];
}

const TOOL_TEXT_FIELDS = ['content', 'new_string', 'prompt', 'query', 'description'];

class TranscriptPlanter {
  private prompts = 0;
  private toolUses = 0;
  private bashCommands = 0;
  private results = 0;
  private texts = 0;
  private rows = 0;

  constructor(
    private readonly planter: Planter,
    private readonly cap: CapPlacer,
    private readonly keepLimit: CapPlacer,
  ) {}

  /** The planted lines of one transcript file (a half-written last line stays as it is). */
  plantFile(text: string): string {
    const lines = text.split('\n');
    const out: string[] = [];
    lines.forEach((line, index) => {
      const isLast = index === lines.length - 1;
      let row: Json | undefined;
      try {
        const value: unknown = JSON.parse(line);
        if (!isLast && typeof value === 'object' && value !== null && !Array.isArray(value)) row = value as Json;
      } catch {
        // broken lines stay broken
      }
      out.push(row ? JSON.stringify(this.plantRow(row)) : line);
      if (row && !isLast && this.rows++ % 40 === 20) out.push(...this.brokenLines());
    });
    return out.join('\n');
  }

  private plantRow(row: Json): Json {
    const message = row.message as { content?: unknown } | undefined;
    if (!message) return row;
    if (row.type === 'user' && typeof message.content === 'string') this.plantPrompt(row, message as { content: unknown });
    else if (Array.isArray(message.content)) {
      for (const block of message.content as Block[]) {
        if (block.type === 'tool_use' && block.input) this.plantToolInput(block);
        else if (block.type === 'tool_result') this.plantToolResult(block, row);
        else if (block.type === 'text' && row.type === 'assistant' && this.texts++ % 4 === 0) {
          block.text = `${block.text ?? ''}\n${this.planter.takeWrapped('assistant-text')}`;
        }
      }
    }
    return row;
  }

  private plantPrompt(row: Json, message: { content: unknown }): void {
    const prompt = message.content as string;
    if (row.isMeta || row.isCompactSummary || SYNTHETIC_PROMPT.test(prompt)) return;
    switch (this.prompts++ % 4) {
      case 0:
        message.content = `${prompt}\n${this.planter.takeWrapped('prompt', true)}`;
        break;
      case 1: {
        // One message, several text blocks: a secret in each, a multi-line one split at a line break.
        const [head, tail] = halves(this.planter.take('prompt-blocks').text);
        const other = this.planter.takeWrapped('prompt-blocks');
        message.content = [prompt, head, tail, other].filter(Boolean).map((text) => ({ type: 'text', text }));
        break;
      }
      case 2: {
        const planted = this.planter.take('prompt-at-cap');
        const build = (padding: string) => `${padding}\n${planted.text}\n${pad(planted.text.length + 600)}\n${prompt}`;
        message.content = build(padFor(build, anchorOf(planted), this.cap.next(anchorOf(planted))));
        break;
      }
      default:
    }
  }

  private plantToolInput(block: Block): void {
    const input = block.input!;
    if (block.name === 'Bash' && typeof input.command === 'string') {
      const command = input.command;
      switch (this.bashCommands++ % 3) {
        case 0:
          // Behind a real program: the shell span is named after the command's first word.
          input.command = `cat > .env <<'EOF'\n${this.planter.take('bash-command', true).text}\nEOF\n${command}`;
          break;
        case 1: {
          // ccotel.tool.input is the input as JSON: the secret is placed across the cap there.
          const planted = this.planter.take('bash-command-at-cap');
          const commandWith = (padding: string) => `${padding}\n${planted.text}\n${pad(planted.text.length + 600)}\n${command}`;
          const build = (padding: string) => JSON.stringify({ ...input, command: commandWith(padding) });
          const padding = padFor(build, anchorOf(planted), this.cap.next(anchorOf(planted)));
          input.command = commandWith(padding);
          break;
        }
        default:
      }
      return;
    }
    if (this.toolUses++ % 2 !== 0) return;
    const field = TOOL_TEXT_FIELDS.find((key) => typeof input[key] === 'string') ?? 'content';
    input[field] = `${(input[field] as string | undefined) ?? ''}\n${this.planter.takeWrapped('tool-input')}`;
  }

  private plantToolResult(block: Block, row: Json): void {
    const content = block.content;
    const original = typeof content === 'string' ? content : '';
    switch (this.results++ % 4) {
      case 0:
        if (Array.isArray(content)) content.push({ type: 'text', text: this.planter.takeWrapped('tool-result', true) });
        else block.content = `${original}\n${this.planter.takeWrapped('tool-result', true)}`;
        break;
      case 1: {
        const [head, tail] = halves(this.planter.take('tool-result-blocks').text);
        const other = this.planter.takeWrapped('tool-result-blocks');
        block.content = [original, head, tail, other].filter(Boolean).map((text) => ({ type: 'text', text }));
        break;
      }
      case 2: {
        if (typeof content !== 'string') return;
        const planted = this.planter.take('tool-result-at-cap');
        const build = (padding: string) => `${padding}\n${planted.text}\n${pad(planted.text.length + 600)}\n${original}`;
        block.content = build(padFor(build, anchorOf(planted), this.cap.next(anchorOf(planted))));
        break;
      }
      default:
        return;
    }
    // What the tool returned in full (PostToolUse tool_response is built from it).
    const result = row.toolUseResult;
    if (typeof result === 'string') row.toolUseResult = `${result}\n${this.planter.take('tool-use-result').text}`;
    else if (typeof result === 'object' && result !== null && typeof (result as Json).stdout === 'string') {
      (result as Json).stdout = `${(result as Json).stdout as string}\n${this.planter.take('tool-use-result').text}`;
    }
  }

  /** Lines the sidecar cannot use (kept aside as `ccotel.record.skipped`), each holding a secret. */
  private brokenLines(): string[] {
    const cut = JSON.stringify({ type: 'user', message: { role: 'user', content: this.planter.take('malformed-line').text } }).slice(0, -3);
    const notObject = JSON.stringify(this.planter.take('malformed-line').text);
    const unknownType = JSON.stringify({ type: 'debug-dump', env: this.planter.take('malformed-line').text });
    const atLimit = this.planter.take('malformed-line-at-keep-limit');
    const build = (padding: string) => `{"type":"user","note":"${padding} ${JSON.stringify(atLimit.text).slice(1, -1)} ${pad(atLimit.text.length + 200)}`;
    const long = build(padFor(build, anchorOf(atLimit), this.keepLimit.next(anchorOf(atLimit))));
    return [cut, notObject, unknownType, long];
  }
}

function transcriptFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .map((name) => join(dir, name));
}

/** Spool files the sidecar cannot parse (moved to the dead-letter dir and reported), each holding a secret. */
function plantSpool(spoolDir: string, planter: Planter): void {
  const names = readdirSync(spoolDir).filter((name) => name.endsWith('.json')).sort();
  const sessionId = (JSON.parse(readFileSync(join(spoolDir, names[0]), 'utf8')) as { session_id: string }).session_id;
  const firedAt = BigInt(names[0].slice(0, 20));
  const broken = [
    // cut off mid-write
    JSON.stringify({ session_id: sessionId, hook_event_name: 'UserPromptSubmit', prompt: planter.take('hook-dead-letter').text }).slice(0, -5),
    // no session id
    JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: planter.take('hook-dead-letter').text } }),
    // not an object
    JSON.stringify([planter.take('hook-dead-letter').text]),
  ];
  broken.forEach((text, index) => {
    const name = `${String(firedAt + BigInt(index + 1)).padStart(20, '0')}-${4000 + index}-deadbe${index}f.json`;
    writeFileSync(join(spoolDir, name), text, { mode: 0o600 });
  });
}

/** Shell log lines that are not records, and a `cmd` cut by the shell script's 4096-byte cap inside a secret. */
function plantShellLogs(shellLogDir: string, planter: Planter, cap: number): void {
  const files = readdirSync(shellLogDir).filter((name) => name.endsWith('.jsonl')).sort();
  for (const name of files.slice(0, 3)) {
    const path = join(shellLogDir, name);
    const [first] = readFileSync(path, 'utf8').split('\n');
    const start = JSON.parse(first) as Json & { cmd: string; pid: number; ts: number };
    const broken = planter.take('shell-log-malformed').text;
    // The script caps `cmd` so that the record fits 4096 bytes: the cut may fall inside a secret.
    const cutSecret = planter.take('shell-cmd-cut');
    const anchor = anchorOf(cutSecret);
    const full = `${pad(cap - 200)} && ${cutSecret.text}`;
    const cmd = full.slice(0, full.indexOf(anchor) + Math.min(12, anchor.length - 1));
    const cutRecord = { ...start, pid: start.pid + 1, ts: start.ts + 1000, cmd, cmdlen: Buffer.byteLength(full) };
    appendFileSync(path, `${JSON.stringify(broken).slice(1, -1)}\n{"v":1,"ev":"start","cmd":${JSON.stringify(broken)}\n${JSON.stringify(cutRecord)}\n`);
  }
}

export async function writePlantedCorpus(options: PlantOptions): Promise<PlantedCorpus> {
  const corpusRoot = join(options.root, 'corpus');
  const expected = await generateCorpus({ seed: options.seed, root: corpusRoot, sessions: options.sessions, hostLayout: 'multi-root' });
  const planter = new Planter(options.clean ?? false);
  const transcripts = new TranscriptPlanter(planter, new CapPlacer(options.capLength - 1), new CapPlacer(SKIPPED_LINE_KEEP));
  for (const configDir of expected.configDirs) {
    let files: string[];
    try {
      files = transcriptFiles(join(configDir, 'projects'));
    } catch {
      continue;
    }
    for (const path of files) {
      const { atime, mtime } = statSync(path);
      writeFileSync(path, transcripts.plantFile(readFileSync(path, 'utf8')));
      utimesSync(path, atime, mtime); // the generator dates each file by its last row
    }
  }
  const spoolDir = join(options.root, 'spool');
  const shellLogDir = join(options.root, 'shell');
  mkdirSync(spoolDir, { recursive: true });
  generateHooksAndShell({ seed: options.seed, configDirs: expected.configDirs, spoolDir, shellLogDir });
  plantSpool(spoolDir, planter);
  plantShellLogs(shellLogDir, planter, options.capLength);
  return {
    configDirs: expected.configDirs,
    home: join(corpusRoot, 'home'),
    spoolDir,
    shellLogDir,
    secrets: planter.secrets,
    kinds: planter.kinds,
    places: planter.places,
    repeatTags: planter.repeats.map((_, index) => `planted-ref-${index}`),
    planted: planter.planted,
  };
}
