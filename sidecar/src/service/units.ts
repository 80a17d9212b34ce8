// The systemd user units of deploy/systemd/, filled in for this host: absolute paths of node and the
// ccotel CLI, and the path variables ccotel was installed with (the user manager does not see the
// login shell's environment, so a CCOTEL_STATE_DIR set there would otherwise be lost). The variables go
// into an environment file of mode 0600 the units name, not into the world-readable units: CCOTEL_STORE
// may be a URL with a password.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SIDECAR_UNIT = 'ccotel.service';
export const RETENTION_SERVICE_UNIT = 'ccotel-retention.service';
export const RETENTION_TIMER_UNIT = 'ccotel-retention.timer';

/** First line of every unit install-service writes: uninstall removes only files that carry it. */
export const WRITTEN_BY = '# Written by `ccotel install-service`; `ccotel uninstall-service` removes it.';

/** Variables that decide where ccotel reads and writes; copied into the units when set. */
export const PATH_VARIABLES = [
  'CCOTEL_CONFIG',
  'CCOTEL_STATE_DIR',
  'CCOTEL_DATA_DIR',
  'CCOTEL_STORE',
  'CLAUDE_CONFIG_DIR',
  'XDG_CONFIG_HOME',
  'XDG_STATE_HOME',
  'XDG_DATA_HOME',
] as const;

export interface UnitProgram {
  /** Absolute path of the node binary. */
  node: string;
  /** Absolute path of the ccotel CLI script (dist/sidecar/src/cli.js). */
  cli: string;
}

const TEMPLATE_DIR = join('deploy', 'systemd');

/** deploy/systemd in the package this module belongs to (works from src/ and from dist/). */
export function unitTemplateDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, TEMPLATE_DIR, SIDECAR_UNIT))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${TEMPLATE_DIR}/${SIDECAR_UNIT} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return join(dir, TEMPLATE_DIR);
}

/** One word of an Exec/Environment line: `%` is a specifier to systemd, quotes keep spaces. */
function systemdWord(value: string): string {
  const escaped = value.replaceAll('%', '%%');
  return /[\s"'\\]/.test(escaped) ? `"${escaped.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : escaped;
}

/** The environment file for the units (`NAME="value"` lines), or undefined when no path variable is set. */
export function environmentFileText(env: Record<string, string | undefined>): string | undefined {
  const lines = PATH_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== '').map((name) => {
    const value = env[name]!;
    if (/[\n\r]/.test(value)) throw new Error(`${name} holds a line break; a systemd environment file cannot carry it`);
    return `${name}="${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  });
  return lines.length === 0 ? undefined : `${WRITTEN_BY}\n${lines.join('\n')}\n`;
}

/**
 * The unit files to install, by name. The retention pair only for an embedded store. `environmentFile`
 * is where the environment file (environmentFileText) is written, when there is one.
 */
export function renderUnits(program: UnitProgram, env: Record<string, string | undefined>, withRetention: boolean, environmentFile: string): Map<string, string> {
  for (const [what, path] of Object.entries(program)) {
    if (!isAbsolute(path)) throw new Error(`the ${what} path in a unit must be absolute, got "${path}"`);
  }
  const names = withRetention ? [SIDECAR_UNIT, RETENTION_SERVICE_UNIT, RETENTION_TIMER_UNIT] : [SIDECAR_UNIT];
  const environment = environmentFileText(env) === undefined ? '' : `EnvironmentFile=${systemdWord(environmentFile)}`;
  const units = new Map<string, string>();
  for (const name of names) {
    const template = readFileSync(join(unitTemplateDir(), name), 'utf8');
    const text = template
      .replaceAll('@NODE@', systemdWord(program.node))
      .replaceAll('@CCOTEL_CLI@', systemdWord(program.cli))
      // the placeholder line disappears when there is nothing to set
      .replace(/^@ENVIRONMENT@\n/m, environment === '' ? '' : `${environment}\n`);
    units.set(name, `${WRITTEN_BY}\n${text}`);
  }
  return units;
}
