// The rules of a `ccotel.settings.effective` record as text, one kind per line (`permissions.allow: Read, Grep`,
// `permissions.defaultMode = "plan"`): for `report settings` and the web view's session page alike.
export function rulesText(json: string | undefined): string {
  const view = JSON.parse(json ?? '{"sets":{},"values":{}}') as { sets: Record<string, string[]>; values: Record<string, string> };
  return [
    ...Object.entries(view.sets).map(([key, items]) => `${key}: ${items.join(', ')}`),
    ...Object.entries(view.values).map(([key, value]) => `${key} = ${value}`),
  ].join('\n');
}
