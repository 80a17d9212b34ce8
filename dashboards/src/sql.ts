/**
 * SQL building blocks over the exporter tables, using only DESIGN.md names. Every block keeps one row per
 * id (SpanId, or the log record's `ccotel.record.id`): delivery is at-least-once, so the tables may hold
 * repeats. Time filters use the plugin's macros; log queries also bound the five-minute sort key, which
 * no macro does (pipeline-reference §1.1).
 */

export const TURN_SPAN = 'invoke_agent claude-code';

/** Spans in the dashboard's time range matching `where`, one row per SpanId. */
export function spans(...conditions: Array<string | undefined>): string {
  const where = ['$__timeFilter(Timestamp)', ...conditions.filter(Boolean)].join(' AND ');
  return `(SELECT * FROM otel_traces WHERE ${where} LIMIT 1 BY SpanId)`;
}

export const turns = (extra?: string) => spans(`SpanName = '${TURN_SPAN}'`, extra);
export const toolCalls = (extra?: string) => spans(`startsWith(SpanName, 'execute_tool ')`, extra);
export const chats = (extra?: string) => spans(`startsWith(SpanName, 'chat ')`, extra);
export const shellCommands = (extra?: string) => spans(`startsWith(SpanName, 'shell ')`, extra);

/** Log records with this event name in the time range, one row per record id. */
export function events(eventName: string, extra?: string): string {
  const where = [
    'toStartOfFiveMinutes(Timestamp) >= toStartOfFiveMinutes($__fromTime)',
    '$__timeFilter(Timestamp)',
    `EventName = '${eventName}'`,
    extra,
  ].filter(Boolean).join(' AND ');
  return `(SELECT * FROM otel_logs WHERE ${where} LIMIT 1 BY LogAttributes['ccotel.record.id'])`;
}

/** Metric points of one name in the time range, one row per point id (kept in the exemplar). */
export function metricPoints(table: 'otel_metrics_sum' | 'otel_metrics_gauge', metricName: string): string {
  return (
    `(SELECT * FROM ${table} WHERE $__timeFilter(TimeUnix) AND MetricName = '${metricName}' ` +
    `LIMIT 1 BY Exemplars.FilteredAttributes[1]['ccotel.point.id'])`
  );
}

export const sessionIdOf = (attributes: 'SpanAttributes' | 'LogAttributes') => `${attributes}['session.id']`;
export const HOST = "ResourceAttributes['host.name']";
export const USER = "ResourceAttributes['user.name']";

/**
 * List prices in USD per million tokens, used for the cost column (cache reads at 0.1×, cache writes
 * at 1.25× the input price). Edit here when prices change, then `npm run dashboards`.
 */
export const PRICES_PER_MTOK: Record<string, { input: number; output: number }> = {
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
};

/** A cost expression for the model column `model` and token sum columns input/output/cache_read/cache_creation. */
export function costExpression(): string {
  const models = Object.keys(PRICES_PER_MTOK).map((m) => `'${m}'`).join(', ');
  const price = (field: 'input' | 'output') =>
    `transform(model, [${models}], [${Object.values(PRICES_PER_MTOK).map((p) => p[field].toFixed(2)).join(', ')}], 0.)`;
  return `round((input + 0.1 * cache_read + 1.25 * cache_creation) * ${price('input')} / 1e6 + output * ${price('output')} / 1e6, 4)`;
}
