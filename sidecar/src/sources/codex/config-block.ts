// A block of ccotel's own lines at the end of Codex's config.toml, between two marker comments: added, replaced and
// taken out as a whole, the user's text around it left byte for byte (a file not ending in a line break gets its
// last line closed, which the start marker records so that removal undoes it). TOML tables may follow one another
// in any order, so a block of table headers at the end never changes what the user's own lines mean.
const START = '# ccotel ';
const END = '# end of ccotel ';
/** Ends the start line when ccotel closed the user's last line. */
const CLOSED_THEIR_LINE = ' [their last line closed by ccotel]';

/** `text` without the block `name` (the first line of its start marker after `# ccotel `) and the breaks put before it. */
export function withoutBlock(text: string, name: string): string {
  const marker = `${START}${name}`;
  const start = text.indexOf(marker);
  if (start === -1) return text;
  const endMarker = `${END}${name.split(':')[0]}`;
  const end = text.indexOf(endMarker, start);
  const after = end === -1 ? '' : text.slice(end + endMarker.length).replace(/^\n/, '');
  const closed = text.startsWith(CLOSED_THEIR_LINE, start + marker.length);
  const before = text.slice(0, start);
  // Only the breaks that are there: another block taken out before may have taken them.
  return before.replace(closed ? /\n{1,2}$/ : /\n$/, '') + after;
}

/** `text` (without the block) with the block `name` of `lines` at its end, one blank line before; none: no block. */
export function withBlock(text: string, name: string, lines: string[]): string {
  const theirs = withoutBlock(text, name);
  if (lines.length === 0) return theirs;
  const closing = theirs !== '' && !theirs.endsWith('\n');
  const before = theirs === '' ? '' : closing ? `${theirs}\n\n` : `${theirs}\n`;
  return `${before}${START}${name}${closing ? CLOSED_THEIR_LINE : ''}\n${lines.join('\n')}\n${END}${name.split(':')[0]}\n`;
}
