/** Where the Sigma rules live and where their Grafana provisioning is written. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alertQueries, loadSigmaRules, provisioningYaml } from './grafana-alerts.js';

const ALERTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SIGMA_DIR = join(ALERTS_DIR, 'sigma');
export const FIXTURES_DIR = join(ALERTS_DIR, 'fixtures');
export const ALERTS_FILE = join(ALERTS_DIR, 'grafana', 'ccotel-alerts.yaml');

export const renderAlertsFile = (): string => provisioningYaml(alertQueries(loadSigmaRules(SIGMA_DIR)));
