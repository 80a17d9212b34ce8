/** `npm run dashboards`: writes dashboards/*.json and the Grafana alert provisioning file. */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALERTS_FILE, renderAlertsFile } from './alerts/src/alerts-file.js';
import { renderDashboardFiles } from './src/dashboards.js';

const dir = dirname(fileURLToPath(import.meta.url));
for (const [name, content] of Object.entries(renderDashboardFiles())) {
  writeFileSync(join(dir, name), content);
  console.log(`wrote dashboards/${name}`);
}
writeFileSync(ALERTS_FILE, renderAlertsFile());
console.log('wrote dashboards/alerts/grafana/ccotel-alerts.yaml');
