/**
 * The subset of Sigma the ccotel rules use, two ways: evaluated on log records (to test rules against
 * fixtures) and converted to ClickHouse SQL over the exporter's otel_logs table (for Grafana alerting).
 * Both follow the Sigma spec for what they support and refuse anything else with an error:
 * - detection: selections as maps (AND) or lists of maps (OR); value lists are OR (AND with `|all`);
 *   modifiers contains, startswith, endswith, re, all; plain and contains/starts/ends matching is
 *   case-insensitive, `re` is case-sensitive;
 * - condition: and, or, not, parentheses, `1 of x*`, `all of x*`, `1 of them`, `all of them`;
 * - correlation: event_count with group-by, timespan and a gte condition.
 */
import { parse as parseYaml } from 'yaml';

export type LogFields = Record<string, string>;

export interface DetectionRule {
  kind: 'detection';
  id: string;
  name: string;
  title: string;
  level: string;
  detection: Record<string, unknown> & { condition: string };
}

export interface CorrelationRule {
  kind: 'correlation';
  id: string;
  name: string;
  title: string;
  level: string;
  rules: string[];
  groupBy: string[];
  timespanSeconds: number;
  gte: number;
}

export type SigmaRule = DetectionRule | CorrelationRule;

const MODIFIERS = new Set(['contains', 'startswith', 'endswith', 're', 'all']);

export function parseSigma(text: string): SigmaRule {
  const doc = parseYaml(text) as Record<string, unknown>;
  const name = String(doc.name ?? '');
  if (!name) throw new Error('a Sigma rule needs a name');
  const id = String(doc.id ?? '');
  if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error(`${name}: id must be a UUID`);
  const common = { id, name, title: String(doc.title ?? name), level: String(doc.level ?? 'medium') };
  if (doc.correlation) {
    const c = doc.correlation as Record<string, unknown>;
    if (c.type !== 'event_count') throw new Error(`${name}: correlation type ${String(c.type)} is not supported`);
    const condition = c.condition as Record<string, number>;
    if (Object.keys(condition).join() !== 'gte') throw new Error(`${name}: only a gte correlation condition is supported`);
    return {
      kind: 'correlation', ...common,
      rules: c.rules as string[], groupBy: (c['group-by'] as string[]) ?? [],
      timespanSeconds: parseTimespan(String(c.timespan)), gte: condition.gte,
    };
  }
  const detection = doc.detection as DetectionRule['detection'];
  if (!detection?.condition) throw new Error(`${name}: detection.condition is missing`);
  return { kind: 'detection', ...common, detection };
}

export function parseTimespan(value: string): number {
  const match = /^(\d+)([smhd])$/.exec(value);
  if (!match) throw new Error(`bad timespan ${value}`);
  return Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as 's' | 'm' | 'h' | 'd'];
}

/** One field condition: `field|mod|mod: value(s)`. */
interface FieldTest {
  field: string;
  modifiers: string[];
  values: string[];
}

function fieldTests(selection: Record<string, unknown>): FieldTest[] {
  return Object.entries(selection).map(([key, value]) => {
    const [field, ...modifiers] = key.split('|');
    for (const m of modifiers) if (!MODIFIERS.has(m)) throw new Error(`modifier |${m} is not supported`);
    const values = (Array.isArray(value) ? value : [value]).map(String);
    return { field, modifiers, values };
  });
}

/** Every selection (named search) as a list of alternatives, each an AND of field tests. */
function selections(rule: DetectionRule): Map<string, FieldTest[][]> {
  const result = new Map<string, FieldTest[][]>();
  for (const [name, body] of Object.entries(rule.detection)) {
    if (name === 'condition') continue;
    const alternatives = Array.isArray(body) ? body : [body];
    result.set(name, alternatives.map((a) => fieldTests(a as Record<string, unknown>)));
  }
  return result;
}

/** Condition AST. */
type Condition =
  | { op: 'ref'; name: string }
  | { op: 'not'; arg: Condition }
  | { op: 'and' | 'or'; args: Condition[] };

function parseCondition(text: string, names: string[]): Condition {
  const tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  let i = 0;
  const expand = (quantifier: string, pattern: string): Condition => {
    const regex = new RegExp(`^${pattern === 'them' ? '.*' : pattern.replaceAll('*', '.*')}$`);
    const matched = names.filter((n) => regex.test(n));
    if (matched.length === 0) throw new Error(`condition: nothing matches ${pattern}`);
    const args = matched.map((name): Condition => ({ op: 'ref', name }));
    return { op: quantifier === 'all' ? 'and' : 'or', args };
  };
  const primary = (): Condition => {
    const token = tokens[i++];
    if (token === '(') {
      const inner = or();
      if (tokens[i++] !== ')') throw new Error(`condition: missing ) in "${text}"`);
      return inner;
    }
    if (token === 'not') return { op: 'not', arg: primary() };
    if ((token === '1' || token === 'all') && tokens[i] === 'of') {
      i++;
      return expand(token, tokens[i++]);
    }
    if (!token || !names.includes(token)) throw new Error(`condition: unknown selection "${token}" in "${text}"`);
    return { op: 'ref', name: token };
  };
  const and = (): Condition => {
    const args = [primary()];
    while (tokens[i] === 'and') { i++; args.push(primary()); }
    return args.length === 1 ? args[0] : { op: 'and', args };
  };
  const or = (): Condition => {
    const args = [and()];
    while (tokens[i] === 'or') { i++; args.push(and()); }
    return args.length === 1 ? args[0] : { op: 'or', args };
  };
  const condition = or();
  if (i !== tokens.length) throw new Error(`condition: unexpected "${tokens[i]}" in "${text}"`);
  return condition;
}

// ---- evaluation on records ----------------------------------------------------------------------------

function valueMatches(actual: string, expected: string, modifiers: string[]): boolean {
  if (modifiers.includes('re')) return new RegExp(expected).test(actual);
  const a = actual.toLowerCase();
  const e = expected.toLowerCase();
  if (modifiers.includes('contains')) return a.includes(e);
  if (modifiers.includes('startswith')) return a.startsWith(e);
  if (modifiers.includes('endswith')) return a.endsWith(e);
  return a === e;
}

function testMatches(test: FieldTest, record: LogFields): boolean {
  const actual = record[test.field];
  if (actual === undefined) return false;
  const hit = (v: string) => valueMatches(actual, v, test.modifiers);
  return test.modifiers.includes('all') ? test.values.every(hit) : test.values.some(hit);
}

function evaluate(condition: Condition, matchesSelection: (name: string) => boolean): boolean {
  switch (condition.op) {
    case 'ref': return matchesSelection(condition.name);
    case 'not': return !evaluate(condition.arg, matchesSelection);
    case 'and': return condition.args.every((c) => evaluate(c, matchesSelection));
    case 'or': return condition.args.some((c) => evaluate(c, matchesSelection));
  }
}

export function matches(rule: DetectionRule, record: LogFields): boolean {
  const all = selections(rule);
  const condition = parseCondition(rule.detection.condition, [...all.keys()]);
  return evaluate(condition, (name) => all.get(name)!.some((tests) => tests.every((t) => testMatches(t, record))));
}

export interface TimedRecord extends LogFields {
  /** Epoch milliseconds. */
  time: string;
}

/** Groups whose count of matching records (one per ccotel.record.id) reaches `gte` inside some timespan window. */
export function correlationFires(
  rule: CorrelationRule,
  base: Map<string, DetectionRule>,
  records: TimedRecord[],
): string[] {
  const seen = new Set<string>();
  const hits = records.filter((r) => {
    const id = r['ccotel.record.id'] ?? JSON.stringify(r);
    if (seen.has(id)) return false;
    seen.add(id);
    return rule.rules.some((name) => {
      const detection = base.get(name);
      if (!detection) throw new Error(`${rule.name}: unknown rule ${name}`);
      return matches(detection, r);
    });
  });
  const groups = new Map<string, number[]>();
  for (const r of hits) {
    const key = rule.groupBy.map((f) => r[f] ?? '').join('\u0000');
    groups.set(key, [...(groups.get(key) ?? []), Number(r.time)].sort((a, b) => a - b));
  }
  const firing: string[] = [];
  for (const [key, times] of groups) {
    const windowFull = times.some((start, i) => times.filter((t, j) => j >= i && t - start <= rule.timespanSeconds * 1000).length >= rule.gte);
    if (windowFull) firing.push(key);
  }
  return firing;
}

// ---- conversion to ClickHouse SQL over otel_logs -------------------------------------------------------

const RESOURCE_FIELDS = new Set(['host.name', 'user.name', 'service.name']);

/** Where a Sigma field lives in the exporter's otel_logs table. */
export function logColumn(field: string): string {
  if (field === 'event.name') return 'EventName';
  if (field === 'body') return 'Body';
  if (field === 'severity') return 'SeverityText';
  return `${RESOURCE_FIELDS.has(field) ? 'ResourceAttributes' : 'LogAttributes'}[${sqlString(field)}]`;
}

function sqlString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function valueSql(column: string, value: string, modifiers: string[]): string {
  if (modifiers.includes('re')) return `match(${column}, ${sqlString(value)})`;
  if (modifiers.includes('contains')) return `positionCaseInsensitiveUTF8(${column}, ${sqlString(value)}) > 0`;
  if (modifiers.includes('startswith')) return `startsWith(lowerUTF8(${column}), lowerUTF8(${sqlString(value)}))`;
  if (modifiers.includes('endswith')) return `endsWith(lowerUTF8(${column}), lowerUTF8(${sqlString(value)}))`;
  return `lowerUTF8(${column}) = lowerUTF8(${sqlString(value)})`;
}

function testSql(test: FieldTest): string {
  const column = logColumn(test.field);
  const parts = test.values.map((v) => valueSql(column, v, test.modifiers));
  const joined = parts.length === 1 ? parts[0] : `(${parts.join(test.modifiers.includes('all') ? ' AND ' : ' OR ')})`;
  // A record without the attribute never matches (a missing map key would read as '').
  const map = /^(\w+)\[/.exec(column)?.[1];
  return map ? `(mapContains(${map}, ${sqlString(test.field)}) AND ${joined})` : joined;
}

function conditionSql(condition: Condition, selectionSql: (name: string) => string): string {
  switch (condition.op) {
    case 'ref': return selectionSql(condition.name);
    case 'not': return `NOT ${conditionSql(condition.arg, selectionSql)}`;
    case 'and':
    case 'or': return `(${condition.args.map((c) => conditionSql(c, selectionSql)).join(` ${condition.op.toUpperCase()} `)})`;
  }
}

/** A boolean SQL expression over otel_logs rows that is true exactly where `matches` is. */
export function detectionSql(rule: DetectionRule): string {
  const all = selections(rule);
  const condition = parseCondition(rule.detection.condition, [...all.keys()]);
  return conditionSql(condition, (name) => {
    const alternatives = all.get(name)!.map((tests) => `(${tests.map(testSql).join(' AND ')})`);
    return alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`;
  });
}

/** Fields a rule reads (to check them against the records the sidecar emits). */
export function ruleFields(rule: SigmaRule): string[] {
  if (rule.kind === 'correlation') return rule.groupBy;
  return [...new Set([...selections(rule).values()].flat(2).map((t) => t.field))];
}
