// Records the Codex fixtures (test/fixtures/codex/<version>/, see codex-scenario.ts; its interactive session in tui/,
// codex-tui.ts), fetching each release once.
//   npx vite-node test/harness/record-codex.ts [version…]
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODEX_VERSIONS, fetchCodex } from './codex-releases.js';
import { recordCodex } from './codex-scenario.js';
import { recordCodexTui, TUI_STALLS_AT_START } from './codex-tui.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/codex');

const versions = process.argv.slice(2);
const notReleases = versions.filter((version) => !/^\d+\.\d+\.\d+$/.test(version));
if (notReleases.length > 0) {
  console.error(`not a release: ${notReleases.join(', ')}\nusage: npx vite-node test/harness/record-codex.ts [version…]   (e.g. ${CODEX_VERSIONS.join(' ')})`);
  process.exit(2);
}
for (const version of versions.length > 0 ? versions : CODEX_VERSIONS) {
  const out = join(FIXTURES, version);
  await recordCodex(fetchCodex(version), version, out);
  // Some releases' TUI now and then never starts its thread (TUI_STALLS_AT_START): the session is recorded again.
  for (let attempt = 1; ; attempt++) {
    try {
      await recordCodexTui(fetchCodex(version), version, join(out, 'tui'));
      break;
    } catch (error) {
      if (!TUI_STALLS_AT_START.has(version) || attempt === 3) throw error;
      console.error(`codex ${version}: the TUI session stalled (attempt ${attempt}), recording it again`);
    }
  }
  console.log(`codex ${version} → ${out}`);
}
