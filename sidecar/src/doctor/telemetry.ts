// Claude Code's own telemetry: whether settings.json turns it on and sends it to `run`'s receiver
// (install-telemetry), and whether it arrives: the newest native row in the store (ServiceName claude-code)
// against the newest transcript activity. Off is fine (it is optional); on but elsewhere, or on and silent, is not.
import { homeOf } from '../install/options.js';
import { readSettings, settingsPathFor, SettingsError } from '../install/settings-file.js';
import { receiverUrl } from '../install/telemetry.js';
import { age, result, type Check } from './check.js';
import { storeClient } from './store.js';

/** Claude Code exports metrics every minute by default; a session active longer than this without any is silent. */
const ARRIVAL_TOLERANCE_MS = 10 * 60_000;
const NATIVE_SERVICE = 'claude-code';

export const telemetryCheck: Check = async (context) => {
  const settingsPath = settingsPathFor(homeOf(context.env));
  let env: Record<string, unknown>;
  try {
    const settings = readSettings(settingsPath);
    env = typeof settings.env === 'object' && settings.env !== null ? (settings.env as Record<string, unknown>) : {};
  } catch (error) {
    if (error instanceof SettingsError) return result('telemetry', 'warn', error.message);
    throw error;
  }
  if (String(env.CLAUDE_CODE_ENABLE_TELEMETRY ?? '') !== '1') {
    return result('telemetry', 'ok', `Claude Code's own telemetry is off in ${settingsPath} (optional: ccotel install-telemetry receives it beside ccotel's)`);
  }
  const port = context.config.nativeTelemetryPort;
  const endpoint = String(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '');
  if (port === 0 || endpoint.replace(/\/+$/, '') !== receiverUrl(port)) {
    const where = port === 0 ? 'native_telemetry_port is 0: ccotel receives none' : `ccotel receives on ${receiverUrl(port)}`;
    return result('telemetry', 'warn', `Claude Code's telemetry is on but goes to ${endpoint || 'its default endpoint'}; ${where}`, 'ccotel install-telemetry --replace (or set native_telemetry_port to the port it sends to)');
  }
  if (context.config.store === '') {
    return result('telemetry', 'ok', `Claude Code's telemetry goes to ${endpoint}; ccotel run forwards it to its collector (no store here to see it arrive)`);
  }
  const reachable = storeClient(context);
  if (!reachable) return result('telemetry', 'warn', `Claude Code's telemetry goes to ${endpoint}, but no ccotel run is holding the store to receive it`, 'start ccotel run');
  let newestMs: number;
  try {
    const answer = await reachable.client.query({
      query: `SELECT toUnixTimestamp64Milli(max(t)) AS newest FROM (
        SELECT max(Timestamp) AS t FROM otel_logs WHERE ServiceName = {service:String}
        UNION ALL SELECT toDateTime64(max(TimeUnix), 9) AS t FROM otel_metrics_sum WHERE ServiceName = {service:String})`,
      query_params: { service: NATIVE_SERVICE },
      format: 'JSONEachRow',
    });
    newestMs = Number((await answer.json<{ newest: string | number }>())[0]?.newest ?? 0);
  } catch (error) {
    return result('telemetry', 'warn', `${reachable.where}: ${(error as Error).message}`, reachable.fix);
  } finally {
    await reachable.client.close();
  }
  const activeMs = context.facts.newestTranscriptMtimeMs;
  if (newestMs <= 0) {
    return result('telemetry', 'warn', `Claude Code's telemetry goes to ${endpoint}, but none is in the store yet`, 'restart the Claude Code sessions (settings are read at start) and keep ccotel run running');
  }
  if (activeMs !== undefined && activeMs - newestMs > ARRIVAL_TOLERANCE_MS) {
    return result(
      'telemetry',
      'warn',
      `the newest of Claude Code's own telemetry is ${age(context.now() - newestMs)} old, but a transcript was written ${age(context.now() - activeMs)} ago: its export stopped`,
      'check that ccotel run was up meanwhile (its log says where it receives), and restart the Claude Code sessions',
    );
  }
  return result('telemetry', 'ok', `Claude Code's own telemetry arrives (newest ${age(context.now() - newestMs)} ago, received on ${endpoint})`);
};
