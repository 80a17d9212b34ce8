// The images cannot be built here (no Docker engine), so this checks what can be checked without one:
// the Dockerfiles parse, every file they COPY from the build context exists and is not excluded by the
// .dockerignore, stages refer to stages that exist, the runtime is node:20-slim with production
// dependencies only, runs as a non-root user, and starts the CLI the TypeScript build produces.
import { DockerfileParser, type Dockerfile, type Instruction } from 'dockerfile-ast';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const DOCKER_DIR = join(REPO, 'deploy', 'docker');

function parse(name: string): Dockerfile {
  return DockerfileParser.parse(readFileSync(join(DOCKER_DIR, name), 'utf8'));
}

/** The arguments of an instruction; JSON (exec) form is decoded. */
function words(instruction: Instruction): string[] {
  const text = instruction.getArgumentsContent() ?? '';
  return text.trim().startsWith('[') ? (JSON.parse(text) as string[]) : instruction.getArguments().map((a) => a.getValue());
}

/** COPY sources taken from the build context (not from another stage). */
function contextSources(dockerfile: Dockerfile): string[] {
  return dockerfile.getCOPYs().filter((copy) => !copy.getFromFlag()).flatMap((copy) => words(copy).slice(0, -1));
}

function ignored(dockerignore: string): string[] {
  return readFileSync(join(DOCKER_DIR, dockerignore), 'utf8').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
}

describe('deploy/docker/Dockerfile (sidecar)', () => {
  const dockerfile = parse('Dockerfile');
  const stages = dockerfile.getFROMs();
  const runtime = stages.at(-1)!;
  const runtimeInstructions = dockerfile.getInstructions().filter((i) => i.getRange().start.line > runtime.getRange().start.line);

  it('parses, builds in one node:20-slim stage and runs in another', () => {
    expect(stages.map((from) => `${from.getImageName()}:${from.getImageTag()}`)).toEqual(['node:20-slim', 'node:20-slim']);
    expect(stages[0]!.getBuildStage()).toBe('build');
  });

  it('copies only files that exist in the repository and are not ignored', () => {
    const sources = contextSources(dockerfile);
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) expect(existsSync(join(REPO, source)), source).toBe(true);
    const excluded = ignored('Dockerfile.dockerignore');
    for (const source of sources) expect(excluded.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)), source).toBe(false);
  });

  it('takes the compiled sidecar from the build stage, which compiles it', () => {
    const fromBuild = dockerfile.getCOPYs().filter((copy) => copy.getFromFlag());
    expect(fromBuild.map((copy) => copy.getFromFlag()!.getValue())).toEqual(['build']);
    expect(words(fromBuild[0]!)[0]).toBe('/src/dist');
    const buildRuns = dockerfile.getInstructions().filter((i) => i.getKeyword() === 'RUN' && i.getRange().start.line < runtime.getRange().start.line);
    expect(buildRuns.map((run) => words(run).join(' '))).toContain('npx tsc -p tsconfig.json');
    // tsc writes dist/<path of the source>.js (rootDir "."), so the entrypoint's script comes from this source
    const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect(tsconfig.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' });
    const [node, script, ...rest] = words(dockerfile.getENTRYPOINTs()[0]!);
    expect([node, rest]).toEqual(['node', []]);
    const packageJson = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: { ccotel: string } };
    expect(`/opt/ccotel/${packageJson.bin.ccotel}`).toBe(script);
    // The launcher is copied into the image, and loads the CLI that tsc compiled from sidecar/src/cli.ts.
    const launcher = packageJson.bin.ccotel;
    const copied = runtimeInstructions.filter((i) => i.getKeyword() === 'COPY').map((i) => words(i));
    expect(copied).toContainEqual([launcher, `./${dirname(launcher)}/`]);
    const loads = /import\('([^']+)'\)/.exec(readFileSync(join(REPO, launcher), 'utf8'))![1];
    expect(resolve(REPO, dirname(launcher), loads)).toBe(join(REPO, 'dist/sidecar/src/cli.js'));
    expect(existsSync(join(REPO, 'sidecar/src/cli.ts'))).toBe(true);
  });

  it('installs production dependencies only, runs as a non-root user, declares volumes for transcripts and state', () => {
    const runs = runtimeInstructions.filter((i) => i.getKeyword() === 'RUN').map((i) => words(i).join(' '));
    expect(runs.some((run) => run.startsWith('npm ci --omit=dev'))).toBe(true);
    const user = runtimeInstructions.filter((i) => i.getKeyword() === 'USER').map((i) => words(i)[0]);
    expect(user).toHaveLength(1);
    expect(['root', '0']).not.toContain(user[0]);
    const volumes = runtimeInstructions.filter((i) => i.getKeyword() === 'VOLUME').flatMap(words);
    expect(volumes).toEqual(expect.arrayContaining(['/home/node/.claude', '/home/node/.local/state/ccotel']));
  });

  it('ships the hook and shell scripts where install-hooks looks for them (beside dist/)', async () => {
    const { SCRIPTS } = await import('../../sidecar/src/install/scripts.js');
    const copied = dockerfile.getCOPYs().filter((copy) => !copy.getFromFlag()).map((copy) => words(copy)[0]);
    for (const script of Object.values(SCRIPTS)) expect(copied).toContain(script.packagePath);
  });
});

describe('deploy/docker/Dockerfile.collector', () => {
  it('copies the builder manifest that exists and starts the binary it builds', () => {
    const dockerfile = parse('Dockerfile.collector');
    for (const source of contextSources(dockerfile)) expect(existsSync(join(REPO, source)), source).toBe(true);
    const manifest = readFileSync(join(REPO, 'collector-config/builder-config.yaml'), 'utf8');
    const name = /^\s+name: (\S+)/m.exec(manifest)![1];
    const outputPath = /^\s+output_path: (\S+)/m.exec(manifest)![1]!.replace(/^\.\//, '');
    const fromBuild = dockerfile.getCOPYs().find((copy) => copy.getFromFlag())!;
    expect(words(fromBuild)[0]).toBe(`/build/${outputPath}/${name}`);
    expect(words(dockerfile.getENTRYPOINTs()[0]!)).toEqual([`/${name}`]);
  });
});
