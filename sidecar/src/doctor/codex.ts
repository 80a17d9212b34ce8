// Codex CLI's rollouts (`codex_home`): none is fine (Codex is not used as this user); there but unreadable is not.
// ccotel's hooks there, if installed, must be trusted in its config.toml: Codex skips an untrusted hook silently.
import { constants, existsSync, realpathSync } from 'node:fs';
import { codexHookTrust } from '../sources/codex/install-hooks.js';
import { codexRoot } from '../sources/codex/rollout-tree.js';
import { discoverTranscripts } from '../sources/transcript-discovery.js';
import { result, type Check } from './check.js';
import { unreadable as notReadable } from './transcripts.js';

export const codexCheck: Check = async (context) => {
  const root = codexRoot(context.config.codexHome);
  if (!existsSync(root)) return result('codex', 'ok', `no Codex rollouts (${root} does not exist: Codex CLI not used as this user); followed once it appears`);
  if (notReadable(root, constants.R_OK | constants.X_OK)) {
    return result('codex', 'fail', `${root} is not readable by this user`, `run the sidecar as the user that runs Codex, or give it read access (chmod -R u+rX ${root})`);
  }
  const rollouts = await discoverTranscripts([root]);
  const unreadable = rollouts.filter((file) => notReadable(file.path, constants.R_OK));
  if (unreadable.length > 0) {
    return result('codex', 'fail', `${unreadable.length} rollout${unreadable.length === 1 ? ' is' : 's are'} not readable by this user: ${unreadable[0].path}`, `give the sidecar's user read access (chmod u+r ${unreadable[0].path})`);
  }
  const newest = rollouts.reduce((latest, file) => Math.max(latest, file.mtimeMs), 0);
  const read = `${root}: ${rollouts.length} rollout${rollouts.length === 1 ? '' : 's'} readable${rollouts.length > 0 ? `, newest written ${new Date(newest).toISOString()}` : ''}`;
  const hooks = codexHookTrust(realpathSync(context.config.codexHome));
  if (hooks.untrusted > 0) {
    return result('codex', 'warn', `${read}; ${hooks.untrusted} of ccotel's ${hooks.installed} Codex hooks lack their trust entry in config.toml, so Codex skips them silently`, `ccotel install-hooks --agent codex (writes the entries again)`);
  }
  return result('codex', 'ok', `${read}; ${hooks.installed > 0 ? `ccotel's ${hooks.installed} hooks installed and trusted` : 'no ccotel hooks (ccotel install-hooks --agent codex)'}`);
};
