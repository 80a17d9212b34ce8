import type { ToolOutcome } from './expected.js';
import type { Rng } from './random.js';
import type { TextPool } from './text.js';

// What each generated tool call looks like: its input, and the tool_result content + toolUseResult
// Claude Code writes for a success, a failure, a denial and an interrupt.

export type ToolResultContent = string | { type: 'text'; text: string }[];

export interface ToolResult {
  outcome: Exclude<ToolOutcome, 'unanswered'>;
  content: ToolResultContent;
  isError: boolean;
  toolUseResult: unknown;
}

export interface ToolKit {
  rng: Rng;
  text: TextPool;
  cwd: string;
}

interface ToolSpec {
  input(k: ToolKit): Record<string, unknown>;
  success(k: ToolKit, input: Record<string, unknown>): ToolResult;
  failure(k: ToolKit, input: Record<string, unknown>): ToolResult;
}

const FILES = ['src/index.ts', 'src/parser.ts', 'src/util/retry.ts', 'README.md', 'package.json', 'test/parser.test.ts'];

function filePath(k: ToolKit): string {
  return `${k.cwd}/${k.rng.pick(FILES)}`;
}

function toolUseError(message: string): ToolResult {
  return { outcome: 'error', content: `<tool_use_error>${message}</tool_use_error>`, isError: true, toolUseResult: `Error: ${message}` };
}

function numbered(body: string): string {
  return body
    .split('\n')
    .map((line, i) => `${i + 1}\t${line}`)
    .join('\n');
}

const TOOLS: Record<string, ToolSpec> = {
  Bash: {
    input: (k) => ({ command: k.rng.pick(['npm test', 'git status', 'ls -la src', 'npx tsc --noEmit', 'rm -rf build']), description: k.text.phrase(k.rng, 4) }),
    success: (k) => {
      const stdout = k.text.text(k.rng, k.rng.int(20, 1500));
      return { outcome: 'success', content: stdout, isError: false, toolUseResult: { stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false } };
    },
    failure: (k) => {
      const stderr = k.text.text(k.rng, k.rng.int(20, 600));
      return { outcome: 'error', content: `Exit code ${k.rng.int(1, 3)}\n${stderr}`, isError: true, toolUseResult: `Error: Exit code 1\n${stderr}` };
    },
  },
  Read: {
    input: (k) => ({ file_path: filePath(k) }),
    success: (k, input) => {
      const body = k.text.text(k.rng, k.rng.int(100, 2000));
      const numLines = body.split('\n').length;
      return {
        outcome: 'success',
        content: numbered(body),
        isError: false,
        toolUseResult: { type: 'text', file: { filePath: input.file_path, content: body, numLines, startLine: 1, totalLines: numLines } },
      };
    },
    failure: (k) => toolUseError(`File does not exist. Note: your current working directory is ${k.cwd}.`),
  },
  Edit: {
    input: (k) => ({ file_path: filePath(k), old_string: k.text.text(k.rng, 60), new_string: k.text.text(k.rng, 70), replace_all: false }),
    success: (k, input) => ({
      outcome: 'success',
      content: `The file ${String(input.file_path)} has been updated successfully.`,
      isError: false,
      toolUseResult: {
        filePath: input.file_path, oldString: input.old_string, newString: input.new_string,
        originalFile: k.text.text(k.rng, k.rng.int(100, 2000)),
        structuredPatch: [{ oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, lines: [`-${String(input.old_string)}`, `+${String(input.new_string)}`] }],
        userModified: false, replaceAll: false,
      },
    }),
    failure: () => toolUseError('String to replace not found in file.'),
  },
  Write: {
    input: (k) => ({ file_path: filePath(k), content: k.text.text(k.rng, k.rng.int(100, 1500)) }),
    success: (k, input) => ({
      outcome: 'success',
      content: `File created successfully at: ${String(input.file_path)}`,
      isError: false,
      toolUseResult: { type: 'create', filePath: input.file_path, content: input.content, structuredPatch: [], originalFile: null },
    }),
    failure: () => toolUseError('File has not been read yet. Read it first before writing to it.'),
  },
  Grep: {
    input: (k) => ({ pattern: k.rng.pick(['TODO', 'export function', 'retry\\(', 'import .* from']), output_mode: 'files_with_matches' }),
    success: (k) => {
      const filenames = FILES.slice(0, k.rng.int(1, FILES.length));
      return { outcome: 'success', content: `Found ${filenames.length} files\n${filenames.join('\n')}`, isError: false, toolUseResult: { mode: 'files_with_matches', filenames, numFiles: filenames.length } };
    },
    failure: () => toolUseError('Invalid regular expression: missing )'),
  },
  Glob: {
    input: (k) => ({ pattern: k.rng.pick(['**/*.ts', 'src/**/*.test.ts', '*.md']) }),
    success: (k) => {
      const filenames = FILES.slice(0, k.rng.int(1, FILES.length)).map((f) => `${k.cwd}/${f}`);
      return { outcome: 'success', content: filenames.join('\n'), isError: false, toolUseResult: { filenames, durationMs: k.rng.int(2, 90), numFiles: filenames.length, truncated: false } };
    },
    failure: () => toolUseError('Path does not exist.'),
  },
  WebFetch: {
    input: (k) => ({ url: `https://docs.example.com/${k.rng.pick(['api', 'guide', 'faq'])}`, prompt: k.text.phrase(k.rng, 6) }),
    success: (k, input) => {
      const result = k.text.text(k.rng, k.rng.int(200, 3000));
      return { outcome: 'success', content: result, isError: false, toolUseResult: { bytes: result.length * 3, code: 200, codeText: 'OK', result, durationMs: k.rng.int(200, 4000), url: input.url } };
    },
    failure: () => toolUseError('Request failed with status code 404'),
  },
};

export const TOOL_NAMES = Object.keys(TOOLS);
/** Tools a permission prompt can stop (read-only tools are allowed by default). */
export const GUARDED_TOOLS = ['Bash', 'Edit', 'Write', 'WebFetch'];

export function toolInput(k: ToolKit, name: string): Record<string, unknown> {
  return TOOLS[name].input(k);
}

export function toolSuccess(k: ToolKit, name: string, input: Record<string, unknown>): ToolResult {
  return TOOLS[name].success(k, input);
}

export function toolFailure(k: ToolKit, name: string, input: Record<string, unknown>): ToolResult {
  return TOOLS[name].failure(k, input);
}

export type DenialKind = 'interactive' | 'rule' | 'print-mode';

export const INTERACTIVE_DENIAL =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/** The three denial wordings: interactive rejection, a permission rule, print mode without the tool allowed. */
export function toolDenial(k: ToolKit, kind: DenialKind, name: string, input: Record<string, unknown>): ToolResult {
  if (kind === 'interactive') return { outcome: 'denied', content: INTERACTIVE_DENIAL, isError: true, toolUseResult: 'User rejected tool use' };
  let message: string;
  if (kind === 'rule') {
    const what = name === 'Bash' ? ` with command ${String(input.command)}` : '';
    message = `Permission to use ${name}${what} has been denied.`;
  } else {
    message = k.rng.pick([
      `rm in '${k.cwd}/build' needs approval. The path is inside the working directories, but the command deletes files.`,
      `touch in '/tmp/outside-${k.rng.hex(6)}' needs approval. The path is outside the working directories.`,
      'This command requires approval',
      `Claude requested permissions to write to ${k.cwd}/${k.rng.pick(FILES)}, but you haven't granted it yet.`,
    ]);
  }
  return { outcome: 'denied', content: message, isError: true, toolUseResult: `Error: ${message}` };
}

export const INTERRUPT_FOR_TOOL = '[Request interrupted by user for tool use]';
export const INTERRUPT = '[Request interrupted by user]';

/** An interrupted call: Bash reports it in toolUseResult.interrupted, other tools in the result text. */
export function toolInterrupted(k: ToolKit, name: string): ToolResult {
  if (name === 'Bash') {
    const stdout = k.text.text(k.rng, k.rng.int(0, 400));
    return { outcome: 'interrupted', content: INTERRUPT_FOR_TOOL, isError: true, toolUseResult: { stdout, stderr: '', interrupted: true, isImage: false, noOutputExpected: false } };
  }
  return { outcome: 'interrupted', content: INTERRUPT_FOR_TOOL, isError: true, toolUseResult: `Error: ${INTERRUPT_FOR_TOOL}` };
}
