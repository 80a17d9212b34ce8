// ccotel's own secret rules, for what secretlint's recommended preset misses or reports with a wrong range
// (secret-detector.ts runs both), and the prefilter every rule's match needs.

// Every rule, secretlint's and ours, needs one of these substrings to match: prefixes that rules
// match case-sensitively, and words they accept in any case. (Node 20 has no inline (?i:…) groups.)
const SECRET_PREFIXES = new RegExp(
  [
    'A3T|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA|PRIVATE KEY|x-oauth-basic|npm_|xox|xapp-|://|SG\\.|shp',
    '_live_|_test_|gh[pousr]_|github_pat_|glpat-|glc_|glsa_|sk-|gsk_|hf_|lin_api_|ntn_|ops_|hv[sbr]\\.',
    'vc[pciark]_|dapi|dckr_pat_|figd_|cfk_|cfut_|cfat_|tskey-|eyJ',
  ].join('|'),
);
const SECRET_WORDS = /secret|access|account|token|passw|passphrase|pwd|(?:api|auth|private)[_-]?key|bearer|authorization|hooks\.slack/i;

export function mayHoldSecret(text: string): boolean {
  return SECRET_PREFIXES.test(text) || SECRET_WORDS.test(text);
}

export interface Rule {
  name: string;
  /** [start, end) pairs of the secrets in text. */
  find(text: string): Iterable<[number, number]>;
}

/**
 * A rule whose secret is the `secret` group of a regex (the whole match when there is none), tried
 * only on texts that contain `keyword`.
 */
function regexRule(name: string, keyword: string, pattern: RegExp, accept: (secret: string) => boolean = () => true): Rule {
  const global = new RegExp(pattern.source, pattern.flags.replace(/[gd]/g, '') + 'gd');
  return {
    name,
    *find(text) {
      if (!text.includes(keyword)) return;
      for (const match of text.matchAll(global)) {
        const [start, end] = match.indices?.groups?.secret ?? match.indices![0];
        if (accept(text.slice(start, end))) yield [start, end];
      }
    },
  };
}

/** Bits per character; random tokens score high, words and repeated characters low. */
function shannonEntropy(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const CODE_CHARS = /[(){}[\]<>$`]/;
// `process.env.DB_PASSWORD`, `config.secrets.signingKey`: segments in camelCase, snake_case or UPPER_CASE.
const IDENTIFIER_SEGMENT = '(?:[a-z]{2,}(?:[A-Z][a-z]{2,})*|(?:[A-Z][a-z]{2,})+|[A-Z]{2,}(?:_[A-Z0-9]+)*|[a-z]{2,}(?:_[a-z0-9]+)*)[0-9]*';
const DOTTED_IDENTIFIER = new RegExp(`^${IDENTIFIER_SEGMENT}(?:\\.${IDENTIFIER_SEGMENT})+$`);
const WORDS = /^[A-Za-z][a-z]+(?:[A-Z_-]?[A-Za-z][a-z]+)*$/;
const FILE_PATH = /^(?:~|\.{1,2})?(?:\/[\w.@-]+){2,}\/?$/;

/** A value in `password=…` style context that is a credential rather than code, a path or words. */
function looksLikeCredential(value: string): boolean {
  if (value.length < 8 || CODE_CHARS.test(value) || value.includes('://')) return false;
  if (DOTTED_IDENTIFIER.test(value) || WORDS.test(value) || FILE_PATH.test(value)) return false;
  const entropy = shannonEntropy(value);
  if (/[0-9]/.test(value) && /[A-Za-z]/.test(value)) return entropy >= 2.5;
  // No digit but a symbol among mixed-case letters: a password manager's kind of value (WORDS above took `Content-Type`).
  if (/[^A-Za-z]/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value)) return entropy >= 2.5;
  // No digit: only a long random-looking mix (a base64 token that happens to have none) counts.
  return value.length >= 24 && /[a-z]/.test(value) && /[A-Z]/.test(value) && entropy >= 4;
}

/** `${PASS}`, `<password>`, `****`: templates and masks, not leaked values. */
function isPlaceholder(value: string): boolean {
  return CODE_CHARS.test(value) || /^[*xX.]+$/.test(value) || /^%[A-Z_]+%$/.test(value);
}

const PEM_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----/g;
const PEM_BODY_CHAR = /[A-Za-z0-9+/=\s:,.\\-]/;
const PEM_MAX_BODY = 64 * 1024;

/**
 * A PEM private key of any length. Without its END line (cut off, or split across texts) everything
 * from BEGIN through the run of base64 after it is the secret.
 */
const privateKeyRule: Rule = {
  name: 'private-key',
  *find(text) {
    if (!text.includes('PRIVATE KEY')) return;
    for (const begin of text.matchAll(PEM_BEGIN)) {
      const bodyStart = begin.index + begin[0].length;
      const endLine = `-----END ${begin[1]}PRIVATE KEY${begin[2] ?? ''}-----`;
      const endAt = text.indexOf(endLine, bodyStart);
      let end = bodyStart;
      while (end < text.length && end - bodyStart < PEM_MAX_BODY && end !== endAt && PEM_BODY_CHAR.test(text[end])) end++;
      yield [begin.index, end === endAt ? endAt + endLine.length : end];
    }
  },
};

// Key names of credential assignments: `password=…`, `DB_PASSWORD: …`, `"clientSecret":"…"`, `x-api-key: …`.
// The lower- and upper-case forms must not continue a word (OLDPWD, mytoken); capitalised is camelCase.
const CREDENTIAL_KEY = [
  '(?<![a-z])(?:password|passwd|passphrase|pwd|secret|token|api[_-]?[kK]ey|access[_-]?[kK]ey|auth[_-]?[kK]ey|private[_-]?[kK]ey)',
  '(?:Password|Passwd|Passphrase|Pwd|Secret|Token|Api[_-]?Key|Access[_-]?Key|Auth[_-]?Key|Private[_-]?Key)',
  '(?<![A-Z])(?:PASSWORD|PASSWD|PASSPHRASE|PWD|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?KEY|AUTH[_-]?KEY|PRIVATE[_-]?KEY)',
].join('|');
const CREDENTIAL_ASSIGNMENT = new RegExp(
  `(?:${CREDENTIAL_KEY})(?:[_-]?(?:key|Key|KEY))?["']?\\s*(?::=|=>|=|:)\\s*["']?(?<secret>[^\\s"'\\\\,;&]{8,})`,
);

export const OWN_RULES: readonly Rule[] = [
  privateKeyRule,
  // The preset's rule needs a word boundary after the key, so a key ending in + or / before a quote is missed.
  regexRule('aws-secret-access-key', '',
    /(?:AWS|aws|Aws)?_?(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)_?(?:KEY|key|Key)["']?\s*(?::|=>|=)\s*["']?(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/),
  regexRule('jwt', 'eyJ', /eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/),
  regexRule('bearer-token', 'earer', /\b[Bb]earer\s+(?<secret>[A-Za-z0-9._~+/-]{8,}=*)/, looksLikeCredential),
  regexRule('basic-auth-header', 'Basic', /\b[Aa]uthorization["']?\s*:\s*["']?Basic\s+(?<secret>[A-Za-z0-9+/]{8,}=*)/),
  regexRule('url-password', '://', /\b[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/[^\s:/@"'<>]{0,256}:(?<secret>[^\s@/"'<>]{1,256})@[^\s"'<>]/,
    (password) => !isPlaceholder(password)),
  regexRule('credential-assignment', '', CREDENTIAL_ASSIGNMENT, looksLikeCredential),
  // Project/service keys without the T3BlbkFJ marker the preset's rule requires.
  regexRule('openai-api-key', 'sk-', /sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}/),
  // The preset's rules for these want a word boundary before the token, so one glued to a word (a tool_use id
  // `toolu_AKIA…`, an event name `PreToolUseAKIA…`, `x_ghp_…`) was kept. Anchored on the token's own shape:
  // its prefix, and a body that does not go on.
  regexRule('aws-access-key-id', 'A', /(?:A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z2-7]{16}(?![A-Z0-9])/),
  regexRule('github-token', 'gh', /gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])/),
  regexRule('github-token', 'github_pat_', /github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9])/),
  regexRule('gitlab-token', 'glpat-', /glpat-[A-Za-z0-9_-]{20}(?![A-Za-z0-9_-])/),
  regexRule('slack-token', 'xox', /xox[abposr]-(?:[0-9]+-)+[A-Za-z0-9]{16,}/),
  regexRule('anthropic-api-key', 'sk-ant-', /sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}/),
  regexRule('stripe-secret-key', '_live_', /[sr]k_live_[A-Za-z0-9]{24,}/),
  regexRule('npm-access-token', 'npm_', /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/),
];
