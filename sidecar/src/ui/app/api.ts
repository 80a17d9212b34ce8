// Where the page's data comes from: the server's JSON API, or the data an exported file carries.
import type { InsightsReport } from '../../report/insight-types.js';
import type { ExportData, FailureRow, Meta, Overview, SessionDetail, SessionRow, TimeRange } from '../types.js';

const exportElement = document.getElementById('ccotel-export');
export const exported: ExportData | undefined = exportElement ? (JSON.parse(exportElement.textContent ?? '{}') as ExportData) : undefined;

export class QueryError extends Error {}

async function get<T>(path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
  const response = await fetch(`${path}?${query}`, { credentials: 'same-origin' });
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error: string }).error;
    } catch {
      // not JSON: the text itself (e.g. 401)
    }
    throw new QueryError(`${response.status}: ${message}`);
  }
  return JSON.parse(text) as T;
}

const rangeParams = (range: TimeRange) => ({ from: range.fromMs, to: range.toMs });

export const api = {
  meta: (): Promise<Meta> => (exported ? Promise.resolve({ live: false, store: 'export', refreshMs: 0 }) : get('/api/meta')),
  overview: (range: TimeRange): Promise<Overview> => (exported ? Promise.resolve(exported.overview) : get('/api/overview', rangeParams(range))),
  sessions: (range: TimeRange): Promise<SessionRow[]> => (exported ? Promise.resolve(exported.sessions) : get('/api/sessions', rangeParams(range))),
  failures: (range: TimeRange): Promise<FailureRow[]> => get('/api/failures', rangeParams(range)),
  insights: (range: TimeRange): Promise<InsightsReport> => get('/api/insights', rangeParams(range)),
  session: (id: string): Promise<SessionDetail> => get('/api/session', { id }),
};
