import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { INSIGHT_PATTERNS, INSIGHT_SQL } from './insights.js';

const REPORT_MD = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'REPORT.md'), 'utf8');
const blanksOne = (text: string) => text.replace(/\s+/g, ' ').trim();

it.each(INSIGHT_PATTERNS)('docs/REPORT.md defines %s and shows the SQL it runs', (pattern) => {
  expect(REPORT_MD).toContain(`**${pattern}**`);
  const shown = new RegExp(`\`${pattern}\`:\\n\`\`\`sql\\n([\\s\\S]*?)\`\`\``).exec(REPORT_MD);
  expect(shown, `no SQL block for ${pattern}`).not.toBeNull();
  expect(blanksOne(shown![1])).toBe(blanksOne(INSIGHT_SQL[pattern]));
});
