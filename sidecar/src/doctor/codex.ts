// Codex CLI's rollouts (`codex_home`): none is fine (Codex is not used as this user); there but unreadable is not.
import { constants, existsSync } from 'node:fs';
import { codexRoot, discoverTranscripts } from '../sources/transcript-discovery.js';
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
  return result('codex', 'ok', `${root}: ${rollouts.length} rollout${rollouts.length === 1 ? '' : 's'} readable${rollouts.length > 0 ? `, newest written ${new Date(newest).toISOString()}` : ''}`);
};
