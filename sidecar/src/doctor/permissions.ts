// Permissions: hook events, shell logs, checkpoints, the installation key and the store hold prompts,
// commands and paths; only their owner may read them (directories 0700, files 0600).
import { readdirSync, statSync, type Stats } from 'node:fs';
import { isServerUrl } from '../store/open-store.js';
import { result, type Check } from './check.js';

interface Expectation {
  what: string;
  path: string;
  mode: number;
}

function stat(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined; // not created yet: nothing to protect
  }
}

export const permissionsCheck: Check = async (context) => {
  const { paths, store } = context.config;
  const expectations: Expectation[] = [
    { what: 'spool dir', path: paths.spoolDir, mode: 0o700 },
    { what: 'shell log dir', path: paths.shellLogDir, mode: 0o700 },
    { what: 'checkpoint dir', path: paths.checkpointDir, mode: 0o700 },
    { what: 'installation key', path: paths.keyPath, mode: 0o600 },
    ...(store !== '' && !isServerUrl(store) ? [{ what: 'store dir', path: store, mode: 0o700 }] : []),
  ];
  const uid = process.getuid?.();
  const problems: string[] = [];
  const fixes: string[] = [];
  for (const { what, path, mode } of expectations) {
    const info = stat(path);
    if (!info) continue;
    if (uid !== undefined && info.uid !== uid) {
      problems.push(`${what} ${path} belongs to uid ${info.uid}, not to this user (${uid})`);
      fixes.push(`chown -R ${uid} ${path}`);
    }
    if ((info.mode & 0o077) !== 0) {
      problems.push(`${what} ${path} is ${(info.mode & 0o777).toString(8)}, should be ${mode.toString(8)}`);
      fixes.push(`chmod ${mode.toString(8)} ${path}`);
    }
  }
  const spoolFiles = stat(paths.spoolDir)?.isDirectory() ? readdirSync(paths.spoolDir).filter((name) => name.endsWith('.json')) : [];
  const openFiles = spoolFiles.filter((name) => ((stat(`${paths.spoolDir}/${name}`)?.mode ?? 0) & 0o077) !== 0);
  if (openFiles.length > 0) {
    problems.push(`${openFiles.length} of ${spoolFiles.length} spool files are readable by others (should be 600), e.g. ${openFiles[0]}`);
    fixes.push(`chmod 600 ${paths.spoolDir}/*.json`);
  }
  return problems.length === 0
    ? result('permissions', 'ok', `${expectations.filter((e) => stat(e.path)).map((e) => e.what).join(', ') || 'nothing created yet'}: private to this user`)
    : result('permissions', 'fail', problems.join('; '), fixes.join(' && '));
};
