// The catch-up a running sidecar reports in its status file (build-pipeline.ts): `status` shows it, and `report`
// warns while it runs, as its figures still grow.
import { checkpointStoresIn, isRunning, type CatchUp } from './sources/checkpoints.js';

export function describeCatchUp(catchUp: CatchUp): string {
  if (catchUp.done) return `done (${catchUp.openSessions} sessions open)`;
  const mb = (catchUp.bytesLeft / 1e6).toFixed(1);
  return `running: ${catchUp.filesLeft} files, ${mb} MB left to read; ${catchUp.openSessions} sessions with open turns; ${catchUp.recordsPending} records not yet stored`;
}

/** The catch-up of a sidecar running on `store` (as the status names it), while it is not done. */
export function catchUpRunning(checkpointDir: string, store: string): CatchUp | undefined {
  for (const checkpoints of checkpointStoresIn(checkpointDir)) {
    const status = checkpoints.loadStatus();
    if (!isRunning(status) || status.store !== store) continue;
    if (status.catchUp && !status.catchUp.done) return status.catchUp;
  }
  return undefined;
}
