import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { SECRET_KINDS, WRAPPINGS, findLeaks, mixedCorpus, negativeText, plantSecret, randomString, wrap } from '../../../test/generators/secrets.js';
import { maskText } from './mask.js';
import { createSecretDetector, type Finding } from './secret-detector.js';

const detector = createSecretDetector();
const key = randomBytes(32);

describe('secret detector', () => {
  it('finds every planted kind, plain and JSON-escaped, so that no 8-character piece survives masking', async () => {
    const planted = Array.from({ length: 5 }, () => SECRET_KINDS.flatMap((kind) => WRAPPINGS.map((wrapping) => ({ ...plantSecret(kind), wrapping })))).flat();
    const texts = planted.map((p) => wrap(p.text, p.wrapping));
    const findings = await detector.detect(texts);
    planted.forEach((p, i) => {
      const masked = maskText(texts[i], findings[i], key);
      expect({ kind: p.kind, wrapping: p.wrapping, leaks: findLeaks(masked, p.secrets) }).toEqual({ kind: p.kind, wrapping: p.wrapping, leaks: [] });
    });
  });

  it('masks only the AWS secret access key, not the variable name the preset reports it from', async () => {
    const secret = randomString(40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789');
    const text = `export AWS_SECRET_ACCESS_KEY=${secret}`;
    const [[finding]] = await detector.detect([text]);
    expect(text.slice(finding.start, finding.end)).toBe(secret);
  });

  it('masks an assigned password with no digit (symbols among mixed-case letters), also cut off before its end', async () => {
    // Found by the planted-secrets e2e test: a cut-off hook event had lost the password's only digit.
    const password = `${randomString(1, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')}${randomString(1, 'abcdefghijklmnopqrstuvwxyz')}#${randomString(12, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#%*+-_.@^~')}`;
    for (const text of [`password=${password}`, `{"prompt":"DB_PASSWORD=${password}`]) {
      const [findings] = await detector.detect([text]);
      expect(findings.map(({ start, end }) => text.slice(start, end)), text).toContainEqual(expect.stringContaining(password));
    }
  });

  it('finds a private key of any length, also without its END line', async () => {
    const body = 'MC4CAQAwBQYDK2VwBCIEI' + randomString(43, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
    const full = `key:\n-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\ndone`;
    const cut = `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}`;
    const [[whole], [truncated]] = await detector.detect([full, cut]);
    expect(full.slice(whole.start, whole.end)).toBe(`-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`);
    expect(cut.slice(truncated.start, truncated.end)).toBe(cut);
  });

  it('maps findings back to the original text through JSON escapes and astral characters', async () => {
    const planted = plantSecret('github-token');
    const inner = `😀 café \u{1F680} ${planted.secrets[0]} end`;
    const escaped = JSON.stringify(JSON.stringify({ text: inner })).replace(/😀/g, '\\\\ud83d\\\\ude00');
    const [[plainFinding], [escapedFinding]] = await detector.detect([inner, escaped]);
    expect(inner.slice(plainFinding.start, plainFinding.end)).toBe(planted.secrets[0]);
    expect(escaped.slice(escapedFinding.start, escapedFinding.end)).toBe(planted.secrets[0]);
    const unicodeEscaped = `{"text":"token \\u0067${planted.secrets[0].slice(1)} end"}`;
    const [[unicodeFinding]] = await detector.detect([unicodeEscaped]);
    expect(unicodeEscaped.slice(unicodeFinding.start, unicodeFinding.end)).toBe(`\\u0067${planted.secrets[0].slice(1)}`);
  });

  it('ignores secretlint-disable comments in the content', async () => {
    const planted = plantSecret('github-token');
    const text = `// secretlint-disable\n${planted.text}\n// secretlint-enable`;
    const [findings] = await detector.detect([text]);
    expect(findLeaks(maskText(text, findings, key), planted.secrets)).toEqual([]);
  });

  it('returns sorted, non-overlapping findings, the same with and without the prefilter', async () => {
    const corpus = mixedCorpus(300_000, 3);
    const withPrefilter = await detector.detect(corpus.texts);
    const withoutPrefilter = await createSecretDetector({ prefilter: false, charsPerLint: 50_000 }).detect(corpus.texts);
    expect(withPrefilter).toEqual(withoutPrefilter);
    for (const findings of withPrefilter) {
      findings.forEach((finding: Finding, i) => {
        expect(finding.end).toBeGreaterThan(finding.start);
        if (i > 0) expect(finding.start).toBeGreaterThanOrEqual(findings[i - 1].end);
      });
    }
    const masked = corpus.texts.map((text, i) => maskText(text, withPrefilter[i], key)).join('\n');
    expect(findLeaks(masked, corpus.secrets)).toEqual([]);
  });

  it('has no false positive on code, hashes, git SHAs, UUIDs, base64 images and trace ids', async () => {
    const texts = Array.from({ length: 3000 }, negativeText);
    const findings = await detector.detect(texts);
    const falsePositives = texts.flatMap((text, i) => findings[i].map((f) => `${f.rule}: ${text.slice(f.start, f.end)}`));
    expect(falsePositives).toEqual([]);
  });

  it('leaves no profiler marks behind (secretlint would keep one per rule per call forever)', async () => {
    await detector.detect([plantSecret('slack-token').text]);
    expect(performance.getEntriesByType('mark').filter((mark) => mark.name.startsWith('@'))).toEqual([]);
  });
});
