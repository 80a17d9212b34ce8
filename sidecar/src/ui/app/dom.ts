// A few DOM helpers: elements from a tag, attributes and children, without a framework.
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string | number | boolean | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(typeof child === 'number' ? String(child) : child);
  return element;
}

export const integer = (value: number): string => Math.round(value).toLocaleString('en-US');
export const percent = (ratio: number): string => `${(ratio * 100).toFixed(1)} %`;

/** `noun` for a count of one, else its plural in -s: "1 session", "2 sessions". */
export const plural = (count: number, noun: string): string => (count === 1 ? noun : `${noun}s`);

export const dollars = (usd: number): string => `$${usd.toFixed(2)}`;

/** A figure the tests compare with `report --json`: the raw value in data-value, shown formatted (or as `text`). */
export function figure(path: string, value: unknown, text?: string): HTMLElement {
  const shown = text ?? (typeof value === 'number' ? (Number.isInteger(value) ? integer(value) : String(value)) : String(value ?? ''));
  return h('span', { 'data-figure': path, 'data-value': String(value ?? '') }, shown);
}

export function utc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} m ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} m`;
}
