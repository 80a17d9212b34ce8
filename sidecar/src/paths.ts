import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** Where ccotel keeps its files on an agent host. Every path is absolute. */
export interface StatePaths {
  /** `$CCOTEL_STATE_DIR`, else `${XDG_STATE_HOME:-$HOME/.local/state}/ccotel`. */
  stateDir: string;
  /** Hook events spooled by ccotel-hook.sh, one file per event. */
  spoolDir: string;
  /** Shell command logs, `<session-id>.jsonl`. */
  shellLogDir: string;
  /** Committed read positions of the sources. */
  checkpointDir: string;
  /** Input that could not be parsed, kept aside. */
  deadLetterDir: string;
  /** Key for the fingerprints of masked secrets. */
  keyPath: string;
  /** Copies of the hook and shell scripts that settings.json and CLAUDE_ENV_FILE refer to. */
  binDir: string;
  /** The OTLP sink's disk queue. */
  otlpQueueDir: string;
  /** One line per hook event the hook had to drop (spool unwritable, disk full). */
  hookDroppedPath: string;
  /** `$CCOTEL_DATA_DIR`, else `${XDG_DATA_HOME:-$HOME/.local/share}/ccotel`. */
  dataDir: string;
  /** The embedded store (chdb data directory). */
  storeDir: string;
}

type Env = Record<string, string | undefined>;

/** An env var that names a directory counts only when absolute (as the XDG spec says). */
function absoluteDir(value: string | undefined): string | undefined {
  return value && isAbsolute(value) ? value : undefined;
}

export function statePaths(env: Env = process.env): StatePaths {
  const home = absoluteDir(env.HOME) ?? homedir();
  const stateDir =
    absoluteDir(env.CCOTEL_STATE_DIR) ?? join(absoluteDir(env.XDG_STATE_HOME) ?? join(home, '.local', 'state'), 'ccotel');
  const dataDir =
    absoluteDir(env.CCOTEL_DATA_DIR) ?? join(absoluteDir(env.XDG_DATA_HOME) ?? join(home, '.local', 'share'), 'ccotel');
  return {
    stateDir,
    spoolDir: join(stateDir, 'spool'),
    shellLogDir: join(stateDir, 'shell'),
    checkpointDir: join(stateDir, 'checkpoints'),
    deadLetterDir: join(stateDir, 'dead-letter'),
    keyPath: join(stateDir, 'installation.key'),
    binDir: join(stateDir, 'bin'),
    otlpQueueDir: join(stateDir, 'otlp-queue'),
    hookDroppedPath: join(stateDir, 'hook-dropped'),
    dataDir,
    storeDir: join(dataDir, 'store'),
  };
}
