// The dependency rule of sidecar/README.md, checked on the import statements of every source file: data flows
// sources → pipeline → processors → sinks, and each layer knows only the shared contracts (model.ts, events.ts and events/,
// semconv.ts, ids.ts, records/), never a neighbour's implementation. And no function takes more than MAX_POSITIONAL arguments
// (more go in one object, whose fields have names at the call site).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../sidecar/src');

type Layer = 'sources' | 'processors' | 'sinks' | 'records' | 'contracts' | 'driver' | 'other';

/** Layers a file of each layer must not import. */
const FORBIDDEN: Record<Layer, Layer[]> = {
  sources: ['processors', 'sinks'],
  processors: ['sources', 'sinks', 'driver'],
  sinks: ['sources', 'processors', 'driver'],
  records: ['sources', 'processors', 'sinks', 'driver', 'other'],
  contracts: ['sources', 'processors', 'sinks', 'driver', 'records', 'other'],
  driver: [],
  other: [],
};

function layerOf(path: string): Layer {
  const top = path.split('/')[0];
  if (top === 'sources' || top === 'processors' || top === 'sinks' || top === 'records') return top;
  if (path === 'model.ts' || path === 'events.ts' || path.startsWith('events/') || path === 'semconv.ts' || path === 'ids.ts') return 'contracts';
  if (['pipeline.ts', 'driver.ts', 'idle-clock.ts', 'build-pipeline.ts'].includes(path)) return 'driver';
  return 'other';
}

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'app' ? [] : sourceFiles(path); // the web page: a bundle of its own
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(SRC, path).split('\\').join('/')] : [];
  });
}

/** Every module a file imports or re-exports, type-only and dynamic imports included, relative to sidecar/src. */
function importsOf(path: string, text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles
    .map((file) => file.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => posix.normalize(posix.join(posix.dirname(path), specifier)).replace(/\.js$/, '.ts'));
}

const MAX_POSITIONAL = 5;

/** `file:line name` of every function, method, constructor or arrow in `text` with more than MAX_POSITIONAL parameters. */
function longArgumentLists(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && node.parameters.length > MAX_POSITIONAL) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(`${file}:${line} ${node.name?.getText(source) ?? '(anonymous)'}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

interface Violation {
  from: string;
  to: string;
}

/** Imports from `files` (path → text) that go against FORBIDDEN. */
function violationsIn(files: Map<string, string>): Violation[] {
  const found: Violation[] = [];
  for (const [from, text] of files) {
    const forbidden = FORBIDDEN[layerOf(from)];
    for (const to of importsOf(from, text)) if (forbidden.includes(layerOf(to))) found.push({ from, to });
  }
  return found;
}

describe('dependency direction', () => {
  const tree = new Map(sourceFiles().map((path) => [path, readFileSync(join(SRC, path), 'utf8')]));

  it('sources import no processor or sink, processors no source, sink or the pipeline, sinks neither, contracts nothing of them', () => {
    expect(tree.size).toBeGreaterThan(50);
    expect(violationsIn(tree)).toEqual([]);
  });

  it('finds an import that goes the wrong way, type-only, re-exported or dynamic', () => {
    const files = new Map([
      ['sources/a.ts', "import type { X } from '../processors/x.js';\nimport { y } from './y.js';"],
      ['processors/b.ts', "export { Z } from '../sources/z.js';"],
      ['sinks/c.ts', "const m = await import('../pipeline.js');"],
      ['records/d.ts', "import { w } from '../config.js';"],
      ['semconv.ts', "import { v } from './records/v.js';"],
      ['commands/e.ts', "import { Pipeline } from '../pipeline.js';\nimport { scan } from '../sources/s.js';"],
    ]);
    expect(violationsIn(files)).toEqual([
      { from: 'sources/a.ts', to: 'processors/x.ts' },
      { from: 'processors/b.ts', to: 'sources/z.ts' },
      { from: 'sinks/c.ts', to: 'pipeline.ts' },
      { from: 'records/d.ts', to: 'config.ts' },
      { from: 'semconv.ts', to: 'records/v.ts' },
    ]);
  });
});

describe('argument lists', () => {
  it(`no function in sidecar/src takes more than ${MAX_POSITIONAL} positional arguments`, () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap((path) => longArgumentLists(path, readFileSync(join(SRC, path), 'utf8')))).toEqual([]);
  });

  it('finds a long list in a function, a method, a constructor and an arrow', () => {
    const six = 'a: number, b: number, c: number, d: number, e: number, f: number';
    const text = `function f(${six}) {}\nclass C {\n  constructor(${six}) {}\n  m(${six}) {}\n}\nconst g = (${six}) => 0;\nfunction five(a: number, b: number, c: number, d: number, e: number) {}`;
    expect(longArgumentLists('x.ts', text)).toEqual(['x.ts:1 f', 'x.ts:3 (anonymous)', 'x.ts:4 m', 'x.ts:6 (anonymous)']);
  });
});

const REPO = join(SRC, '../..');

/** Modules `path` (relative to the repository) loads when it runs: static and dynamic imports, not type-only ones. */
function runtimeImportsOf(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? node.importClause?.isTypeOnly === true : node.isTypeOnly;
      if (!typeOnly) specifiers.push(node.moduleSpecifier.text);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0]!)) specifiers.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.map((specifier) => (specifier.startsWith('.') ? posix.normalize(posix.join(posix.dirname(path), specifier)).replace(/\.js$/, '.ts') : specifier));
}

/** The chain of modules by which `script` loads vitest, or undefined when it does not. */
function vitestChain(script: string, read: (path: string) => string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (path: string): string[] | undefined => {
    if (seen.has(path)) return undefined;
    seen.add(path);
    for (const imported of runtimeImportsOf(path, read(path))) {
      if (imported === 'vitest') return [path];
      if (!imported.endsWith('.ts')) continue;
      const chain = walk(imported);
      if (chain) return [path, ...chain];
    }
    return undefined;
  };
  return walk(script);
}

/** Scripts run outside vitest: the benchmarks, and the harness's recording and fixture scripts (they read their arguments). */
function scripts(): string[] {
  const inDir = (dir: string) => readdirSync(join(REPO, dir)).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts')).map((name) => `${dir}/${name}`);
  return [...inDir('bench'), ...inDir('test/harness').filter((path) => readFileSync(join(REPO, path), 'utf8').includes('process.argv'))];
}

describe('scripts run outside vitest', () => {
  // vitest throws when it is loaded by a process it does not run (`Vitest failed to access its internal state`): a
  // test helper that registers hooks, imported by a bench or a recording script, broke `node dist/bench/ui.js` and
  // `record-codex.ts` that way.
  it('load no module that imports vitest', () => {
    const found = scripts();
    expect(found).toEqual(expect.arrayContaining(['bench/ui.ts', 'bench/report.ts', 'test/harness/record-codex.ts']));
    expect(found.map((script) => vitestChain(script, (path) => readFileSync(join(REPO, path), 'utf8'))).filter(Boolean)).toEqual([]);
  });

  it('finds vitest behind a re-export and a dynamic import, not behind a type-only import', () => {
    const files = new Map([
      ['s.ts', "import type { T } from './t.js';\nexport { a } from './a.js';"],
      ['t.ts', "import { it } from 'vitest';"],
      ['a.ts', "const b = await import('./b.js');"],
      ['b.ts', "import { beforeAll } from 'vitest';"],
      ['c.ts', "import type { Mock } from 'vitest';"],
    ]);
    const read = (path: string) => files.get(path)!;
    expect(vitestChain('s.ts', read)).toEqual(['s.ts', 'a.ts', 'b.ts']);
    expect(vitestChain('c.ts', read)).toBeUndefined();
  });
});
