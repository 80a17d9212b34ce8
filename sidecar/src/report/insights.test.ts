import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { HIT_SQL, MODELS_SQL } from '../retention/insight-slots.js';
import { CACHE_CONDITION, HIT_CONDITION, INSIGHT_PATTERNS } from './insights.js';

const REPORT_MD = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'REPORT.md'), 'utf8');
const blanksOne = (text: string) => text.replace(/\s+/g, ' ').trim();

it.each(INSIGHT_PATTERNS)('docs/REPORT.md defines %s and shows the SQL it runs, and the condition it is found by', (pattern) => {
  expect(REPORT_MD).toContain(`**${pattern}**`);
  const shown = new RegExp(`\`${pattern}\`:\\n\`\`\`sql\\n([\\s\\S]*?)\`\`\``).exec(REPORT_MD);
  expect(shown, `no SQL block for ${pattern}`).not.toBeNull();
  const [sql, condition] = pattern === 'cache_efficiency' ? [MODELS_SQL, CACHE_CONDITION] : [HIT_SQL[pattern], HIT_CONDITION[pattern]];
  expect(blanksOne(shown![1])).toBe(blanksOne(`${sql}\n-- found when: ${condition}`));
});
