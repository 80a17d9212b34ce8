// The shapes the web view's JSON API returns; shared by the server (sidecar/src/ui) and the page (ui/app).
// Report sections are exactly what `ccotel report --json` prints, so the page shows the same figures.

export type ReportJson = Record<string, Record<string, unknown>[]>;

/** A time range in epoch ms; an absent bound is open. */
export interface TimeRange {
  fromMs?: number;
  toMs?: number;
}

export interface DaySeries {
  /** Epoch seconds of each UTC day (uPlot's x axis). */
  days: number[];
  sessions: number[];
  turns: number[];
  toolCalls: number[];
  toolSuccess: number[];
  costUsd: number[];
  inputTokens: number[];
  outputTokens: number[];
  cacheReadTokens: number[];
  cacheCreationTokens: number[];
  permissionBlocks: number[];
  starts: number[];
  resumes: number[];
  /** Detections per mode, aligned with `days`. */
  failureModes: Record<string, number[]>;
}

export interface SessionRow {
  session: string;
  project: string;
  /** The repository (vcs.repository.url.full) and branch of its latest span that names them ('' : none). */
  repo: string;
  branch: string;
  /** `claude-code`, `codex`. */
  agent: string;
  start_ms: number;
  end_ms: number;
  /** From the summaries, also when the raw tables no longer hold the session. */
  turns: number;
  tool_calls: number;
  /** Tokens and cost as `report session --json` gives them. */
  total_tokens: number;
  cost_usd: number;
  /** Claude Code's own statement of the session's cost, null when it stated none. */
  reported_cost_usd: number | null;
  /** Outcome of the session's latest turn. */
  outcome: string;
  /** Latest `ccotel.session.state_changed` state ('' when no hook reported one). */
  state: string;
  resumes: number;
  failure_modes: string[];
}

export interface ProjectRow {
  project: string;
  sessions: number;
  tokens: number;
  cost_usd: number;
}

/** A repository's sessions (each counted in the repository of its latest span that names one; '' : none). */
export interface RepositoryRow extends Omit<ProjectRow, 'project'> {
  repository: string;
}

export interface Overview {
  range: TimeRange;
  report: ReportJson;
  days: DaySeries;
  projects: ProjectRow[];
  repositories: RepositoryRow[];
}

export interface SpanRow {
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  start_ms: number;
  duration_ms: number;
  status: string;
  attributes: Record<string, string>;
  events: { name: string; time_ms: number; attributes: Record<string, string> }[];
}

export interface LogRow {
  time_ms: number;
  event: string;
  trace_id: string;
  span_id: string;
  attributes: Record<string, string>;
}

export interface SessionDetail {
  session: string;
  spans: SpanRow[];
  /** State changes, starts, ends, permission blocks and failure modes, in time order. */
  logs: LogRow[];
  /** True when the span list was cut at the limit. */
  truncated: boolean;
  /** The raw spans expired: `spans` are the session's span facts, nested by time (ui/expired.ts). */
  fromFacts: boolean;
}

export interface FailureRow {
  time_ms: number;
  mode: string;
  session: string;
  tool_use_id: string;
  pid: string;
  command_line: string;
  port: string;
  cause: string;
  /** What was found, in words (telemetry_gap: what differs and from when); '' beyond the raw window. */
  detail: string;
  trace_id: string;
}

export interface Meta {
  /** The store is being written by a running `ccotel run`: the page refreshes itself. */
  live: boolean;
  store: string;
  refreshMs: number;
}

/** The data an exported HTML file carries in place of the API. */
export interface ExportData {
  generatedMs: number;
  overview: Overview;
  sessions: SessionRow[];
}
