// Clock sane: record and file times written on this host must not lie in its future, and the
// collector's Date header must agree with it. Spans take their times from the records, so a wrong
// clock puts a host's data at the wrong place on every dashboard.
import { age, result, type Check } from './check.js';

/** Beyond this the clock is wrong; the Date header has one-second resolution, plus the round trip. */
const SKEW_FAIL_MS = 2 * 60_000;
const SKEW_WARN_MS = 30_000;
const FIX = 'turn on time synchronisation (timedatectl set-ntp true, or chrony/ntpd) on this host and on the collector host';

export const clockCheck: Check = async (context) => {
  const now = context.now();
  const { facts } = context;
  const local = [
    ['the newest transcript record', facts.newestTranscriptRecordMs],
    ['the newest transcript file', facts.newestTranscriptMtimeMs],
    ['the newest hook event', facts.newestSpoolEventMs],
  ] as const;
  for (const [what, time] of local) {
    if (time !== undefined && time - now > SKEW_FAIL_MS) {
      return result('clock', 'fail', `${what} is from ${new Date(time).toISOString()}, ${age(time - now)} in this host's future: the clock was set back`, FIX);
    }
  }
  const compared: string[] = local.filter(([, time]) => time !== undefined).map(([what]) => what);
  if (facts.collectorDate) {
    const skew = facts.collectorDate.receivedMs - facts.collectorDate.dateMs;
    const text = `this host is ${age(Math.abs(skew))} ${skew >= 0 ? 'ahead of' : 'behind'} the collector`;
    if (Math.abs(skew) > SKEW_FAIL_MS) return result('clock', 'fail', text, FIX);
    if (Math.abs(skew) > SKEW_WARN_MS) return result('clock', 'warn', text, FIX);
    compared.push('the collector');
  }
  return result('clock', 'ok', compared.length === 0 ? 'nothing to compare with yet' : `agrees with ${compared.join(', ')}`);
};
