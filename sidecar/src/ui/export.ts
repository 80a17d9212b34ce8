// `ccotel ui --export FILE`: one HTML file with the page, its styles and the overview and sessions data
// inline, opened from disk with no server and no network. Only what the store holds masked goes in: the
// figures, project directories and session ids; no prompt or tool input.
import type { Store } from '../store/open-store.js';
import { UiData } from './data.js';
import { readAsset } from './server.js';
import type { ExportData, TimeRange } from './types.js';

/** JSON that cannot end the script element it sits in. */
const scriptSafe = (json: string) => json.replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

export async function exportHtml(store: Pick<Store, 'client' | 'database'>, range: TimeRange, nowMs = Date.now()): Promise<string> {
  const data = new UiData(store.client, store.database);
  const exported: ExportData = { generatedMs: nowMs, overview: await data.overview(range), sessions: await data.sessions(range) };
  const page = readAsset('index.html');
  return page
    .replace('<link rel="stylesheet" href="/assets/app.css">', () => `<style>${readAsset('app.css')}</style>`)
    .replace(
      '<script src="/assets/app.js"></script>',
      () => `<script id="ccotel-export" type="application/json">${scriptSafe(JSON.stringify(exported))}</script>\n<script>${readAsset('app.js').replace(/<\/script/gi, '<\\/script')}</script>`,
    );
}
