// A suite that needs a real part (the Claude Code CLI, the Collector binary, tmux) skips without it, saying why,
// on a developer's machine; under CI=true a missing part fails the run, named, so CI never passes without them.
export function skipWithout(problem: string | undefined): boolean {
  if (problem === undefined) return false;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`CI runs every suite with its real parts: ${problem}`);
  console.warn(`skipped: ${problem}`);
  return true;
}
