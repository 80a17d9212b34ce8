// Where ccotel is known to be wrong on the recorded samples of a release (docs/VERSIONS.md lists them): each such
// check runs as it.fails, so the suite stays green while the gap is open and turns red the day it is fixed.
import { compareVersions } from '../harness/claude-releases.js';
import type { MatrixSample } from './version-matrix-samples.js';

export type CheckName = 'sessions' | 'warmup-sessions' | 'turns' | 'tokens' | 'cli-tokens' | 'tools' | 'cli-denials' | 'under-turn';

interface KnownGap {
  from: string;
  to: string;
  scenarios: string[];
  checks: CheckName[];
  why: string;
}

// B to I and H′ (docs/VERSIONS.md) were fixed. A new gap gets an entry here until it is.
export const KNOWN_GAPS: KnownGap[] = [];

/** The reason a check of this sample is known to fail, or undefined. */
export function knownGap(sample: MatrixSample, check: CheckName): string | undefined {
  const gap = KNOWN_GAPS.find(
    (g) =>
      g.checks.includes(check) &&
      g.scenarios.includes(sample.scenario) &&
      compareVersions(sample.version, g.from) >= 0 &&
      compareVersions(sample.version, g.to) <= 0,
  );
  return gap?.why;
}
