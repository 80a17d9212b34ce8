// Each benchmark hands its headline figures, with the bound issue #18 set for them, to `reportGoals`;
// `npm run bench` (bench/all.ts) runs every benchmark and prints those figures as one table.
import { appendFileSync } from 'node:fs';

export interface GoalFigure {
  /** What is measured, e.g. "backfill vs the one-core floor (conversation-heavy mix)". */
  goal: string;
  measured: number;
  unit: string;
  /** The bound the figure must meet, and on which side. */
  bound: number;
  better: 'higher' | 'lower';
  /** The peer measured in the same run, for a ratio ("the floor", "ccusage", "bare cat > file"). */
  peer?: string;
}

/** Where bench/all.ts collects the figures (one JSON line per benchmark); unset when a benchmark runs alone. */
export const SUMMARY_ENV = 'CCOTEL_BENCH_SUMMARY';

export function reportGoals(bench: string, figures: GoalFigure[]): void {
  const path = process.env[SUMMARY_ENV];
  if (path) appendFileSync(path, `${JSON.stringify({ bench, figures })}\n`);
}

export function goalMet(figure: GoalFigure): boolean {
  return figure.better === 'higher' ? figure.measured >= figure.bound : figure.measured <= figure.bound;
}
