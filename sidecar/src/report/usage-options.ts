// The periods and dimensions `report` takes, apart from the usage queries (usage.ts): the command reads its arguments
// with these before it knows whether it needs the queries at all (a kept output does not, report/kept-output.ts).

/** `all`: all history as one period (what `report --by` without a period shows). */
export type UsagePeriod = 'daily' | 'weekly' | 'monthly' | 'session' | 'blocks' | 'all';
export const USAGE_PERIODS: readonly UsagePeriod[] = ['daily', 'weekly', 'monthly', 'session', 'blocks'];

/**
 * What usage can be broken down by (DESIGN §11), each an expression over the usage items: a chat's own attribution
 * (the branch it was answered on), a session's project (its first cwd); `resource.KEY` is any resource attribute
 * given in OTEL_RESOURCE_ATTRIBUTES, `team` the one named team.
 */
export const USAGE_DIMENSIONS = ['host', 'user', 'repo', 'branch', 'ticket', 'team', 'project'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number] | `resource.${string}`;

export function isUsageDimension(text: string): text is UsageDimension {
  return (USAGE_DIMENSIONS as readonly string[]).includes(text) || /^resource\..+/.test(text);
}
