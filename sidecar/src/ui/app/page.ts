// What every page of the web view is to the router in main.ts.
import type { TimeRange } from '../types.js';

export interface Page {
  /** Fetch and draw; called again on each live refresh and range change. */
  load(range: TimeRange): Promise<void>;
  destroy?(): void;
}
