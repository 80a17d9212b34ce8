/** `npm run dashboards`: writes dashboards/*.json from dashboards/src/dashboards.ts. */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderDashboardFiles } from './src/dashboards.js';

const dir = dirname(fileURLToPath(import.meta.url));
for (const [name, content] of Object.entries(renderDashboardFiles())) {
  writeFileSync(join(dir, name), content);
  console.log(`wrote dashboards/${name}`);
}
