// The recorded interactive samples (test/fixtures/real/2.1.332-interactive, made by
// test/harness/make-interactive-fixtures.ts): what each scenario's script implies, and Claude Code's own
// telemetry of the run.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BlockSource } from '../harness/interactive-scenarios.js';
import type { SessionExpectation } from '../harness/scenarios.js';
import { sampleTelemetry, type NativeTelemetry } from './native-telemetry.js';

export const INTERACTIVE_SAMPLES = join(import.meta.dirname, '..', 'fixtures', 'real', '2.1.332-interactive');

export interface InteractiveSample {
  name: string;
  dir: string;
  sessions: (SessionExpectation & { sessionId: string })[];
  /** Every refusal the scenario made, with who made it. */
  blocks: { tool: string; source: BlockSource }[];
  native: NativeTelemetry;
}

export function interactiveSamples(): InteractiveSample[] {
  return readdirSync(INTERACTIVE_SAMPLES)
    .filter((name) => existsSync(join(INTERACTIVE_SAMPLES, name, 'expectations.json')))
    .map((name) => {
      const dir = join(INTERACTIVE_SAMPLES, name);
      const expectations = JSON.parse(readFileSync(join(dir, 'expectations.json'), 'utf8')) as Pick<InteractiveSample, 'sessions' | 'blocks'>;
      return { name, dir, sessions: expectations.sessions, blocks: expectations.blocks, native: sampleTelemetry(dir) };
    });
}

/**
 * How Claude Code's `blocked_on_user`/`tool_decision` source names the refusal ccotel attributes to
 * `source`: auto mode's refusals and permission rules are both `config` there.
 */
export const NATIVE_REFUSAL_SOURCE: Record<BlockSource, string> = { user: 'user_reject', hook: 'hook', rule: 'config', classifier: 'config' };
