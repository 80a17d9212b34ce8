/**
 * Expands a panel's SQL the way Grafana and the ClickHouse plugin do before it reaches ClickHouse, so tests
 * can run the exact text a dashboard sends:
 * 1. the frontend replaces template variables (`${name}`, `$name`) with their values;
 * 2. the plugin backend (sqlds) replaces its macros, as in grafana/clickhouse-datasource pkg/macros/macros.go:
 *    times become `toDateTime(<unix s>)` / `fromUnixTimestamp64Milli(<ms>)`, filters are inclusive
 *    `col >= from AND col <= to`, intervals are `toStartOfInterval(…, INTERVAL n second)` with n >= 1.
 */

export interface MacroContext {
  fromMs: number;
  toMs: number;
  /** The panel's interval ($__interval), milliseconds. */
  intervalMs: number;
  variables?: Record<string, string>;
}

const seconds = (ms: number) => Math.floor(ms / 1000);
const dateTime = (ms: number) => `toDateTime(${seconds(ms)})`;
const dateTime64 = (ms: number) => `fromUnixTimestamp64Milli(${Math.floor(ms)})`;
const date = (ms: number) => `toDate('${new Date(ms).toISOString().slice(0, 10)}')`;

type Macro = (args: string[], ctx: MacroContext) => string;

function withArgs(count: number, body: (args: string[], ctx: MacroContext) => string): Macro {
  return (args, ctx) => {
    if (args.length !== count) throw new Error(`bad argument count: expected ${count} argument(s), received ${args.length}`);
    return body(args, ctx);
  };
}

const range = (column: string, bound: (ms: number) => string, ctx: MacroContext) =>
  `${column} >= ${bound(ctx.fromMs)} AND ${column} <= ${bound(ctx.toMs)}`;
const dateTimeFilter = withArgs(2, ([dateColumn, timeColumn], ctx) =>
  `(${range(dateColumn, date, ctx)}) AND (${range(timeColumn, dateTime, ctx)})`);

export const PLUGIN_MACROS: Record<string, Macro> = {
  fromTime: (_a, ctx) => dateTime(ctx.fromMs),
  toTime: (_a, ctx) => dateTime(ctx.toMs),
  fromTime_ms: (_a, ctx) => dateTime64(ctx.fromMs),
  toTime_ms: (_a, ctx) => dateTime64(ctx.toMs),
  timeFilter: withArgs(1, ([column], ctx) => range(column, dateTime, ctx)),
  timeFilter_ms: withArgs(1, ([column], ctx) => range(column, dateTime64, ctx)),
  dateFilter: withArgs(1, ([column], ctx) => range(column, date, ctx)),
  dateTimeFilter,
  dt: dateTimeFilter,
  timeInterval: withArgs(1, ([column], ctx) =>
    `toStartOfInterval(toDateTime(${column}), INTERVAL ${Math.max(seconds(ctx.intervalMs), 1)} second)`),
  timeInterval_ms: withArgs(1, ([column], ctx) =>
    `toStartOfInterval(toDateTime64(${column}, 3), INTERVAL ${Math.max(Math.floor(ctx.intervalMs), 1)} millisecond)`),
  interval_s: (_a, ctx) => String(Math.max(seconds(ctx.intervalMs), 1)),
};

/** Like Grafana's template service: known variables are replaced, anything else (`$HOME` in a regex) is left. */
export function interpolateVariables(sql: string, variables: Record<string, string> = {}): string {
  // `${name:format}`: the value is given formatted (a test passes what Grafana would put in).
  return sql.replace(/\$\{(\w+)(?::\w+)?\}|\$(?!__)(\w+)/g, (match, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? '';
    return name in variables ? variables[name] : match;
  });
}

export function expandMacros(sql: string, ctx: MacroContext): string {
  return interpolateVariables(sql, ctx.variables).replace(
    /\$__(\w+)(?:\(([^()]*)\))?/g,
    (match, name: string, args: string | undefined) => {
      const macro = PLUGIN_MACROS[name];
      if (!macro) throw new Error(`unknown macro ${match}`);
      return macro(args === undefined ? [] : args.split(',').map((a) => a.trim()), ctx);
    },
  );
}
