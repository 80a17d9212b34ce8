// The recorded Claude Code samples under test/fixtures/real: each a Claude config dir holding `projects`.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Their paths under `fixtures`: `<scenario>` (the pinned release) and `<release>/<scenario>`. */
export function recordedFixtures(fixtures: string): string[] {
  return readdirSync(fixtures, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const dir = join(fixtures, entry.name);
      // A release folder holds one recorded scenario per subfolder; a scenario folder holds its own `projects`.
      if (existsSync(join(dir, 'projects'))) return [entry.name];
      return readdirSync(dir).filter((name) => existsSync(join(dir, name, 'projects'))).map((name) => `${entry.name}/${name}`);
    });
}
