import { randomBytes, randomInt, randomUUID } from 'node:crypto';

// Planted-secret corpus: fresh random secrets on every run, formatted like the real ones, in the
// places they really turn up (env dumps, config files, curl commands, JSON tool payloads), plus a
// negative corpus of content that must stay untouched. `secrets` lists the random part of every
// planted secret, so a test can assert that no 8-character piece of any of them survives masking.

export interface PlantedText {
  kind: SecretKind;
  text: string;
  /** The random parts of the secrets in `text` (each at least 8 characters). */
  secrets: string[];
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const BASE64 = ALNUM + '+/';
const BASE64URL = ALNUM + '-_';
const BASE32 = UPPER + '234567';
const HEX = '0123456789abcdef';
const PASSWORD_SYMBOLS = '!#%*+-_.@^~';

// Random 16-bit values drawn from one large buffer: many small randomBytes calls make big corpora slow.
let pool = Buffer.alloc(0);
let poolOffset = 0;

function random16(): number {
  if (poolOffset + 2 > pool.length) {
    pool = randomBytes(1 << 16);
    poolOffset = 0;
  }
  const value = pool.readUInt16LE(poolOffset);
  poolOffset += 2;
  return value;
}

export function randomString(length: number, alphabet: string): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[random16() % alphabet.length];
  return out;
}

function pick<T>(items: readonly T[]): T {
  return items[randomInt(items.length)];
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** Like a password manager's: one of each character class, the rest mixed. */
function randomPassword(symbols = PASSWORD_SYMBOLS): string {
  const classes = [UPPER, LOWER, DIGITS, symbols];
  const chars = [...classes.map((c) => randomString(1, c)), ...randomString(randomInt(12, 21), ALNUM + symbols)];
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  return chars.join('');
}

/** A PEM block whose base64 body after a fixed DER prefix is random; the secrets are the random parts of its lines. */
function pemKey(label: string, derPrefix: string, bodyLength: number): { pem: string; secrets: string[] } {
  const body = derPrefix + randomString(bodyLength - derPrefix.length, BASE64);
  const lines = body.match(/.{1,64}/g)!;
  return {
    pem: `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`,
    // The DER prefix is the same in every key of a type (and in public keys): only the rest is secret.
    secrets: [lines[0].slice(derPrefix.length), ...lines.slice(1)].filter((line) => line.length >= 8),
  };
}

const SECRET_MAKERS = {
  'aws-access-key-id': () => {
    const id = 'AKIA' + randomString(16, BASE32);
    return { text: pick([`aws_access_key_id = ${id}`, `AWS_ACCESS_KEY_ID=${id}`, `"AccessKeyId": "${id}",`]), secrets: [id] };
  },
  'aws-secret-access-key': () => {
    const key = randomString(40, BASE64);
    const line = pick([`aws_secret_access_key = ${key}`, `AWS_SECRET_ACCESS_KEY=${key}`, `"SecretAccessKey": "${key}",`]);
    return { text: line, secrets: [key] };
  },
  'github-token': () => {
    const token = pick(['ghp_', 'gho_', 'ghs_']) + randomString(36, ALNUM);
    const line = pick([`git remote set-url origin https://x-access-token:${token}@github.com/acme/app.git`, `Using ${token} for the GitHub API`]);
    return { text: line, secrets: [token] };
  },
  'github-fine-grained-token': () => {
    const random = randomString(22, ALNUM) + '_' + randomString(59, ALNUM);
    return { text: `gh auth login --with-token <<< github_pat_${random}`, secrets: [random] };
  },
  'gitlab-token': () => {
    const token = 'glpat-' + randomString(20, ALNUM);
    return { text: `curl --header "PRIVATE-TOKEN: ${token}" https://gitlab.example.com/api/v4/projects`, secrets: [token] };
  },
  'slack-token': () => {
    // Team and user ids, then the random part: only that is secret (and digits alone would match anything).
    const random = randomString(24, ALNUM);
    const token = `${pick(['xoxb', 'xoxp'])}-${randomString(12, DIGITS)}-${randomString(13, DIGITS)}-${random}`;
    return { text: `SLACK_BOT=${token} # posted to #deploys`, secrets: [random] };
  },
  'openai-api-key': () => {
    const [head, tail] = [randomString(74, ALNUM), randomString(74, ALNUM)];
    return { text: `client = OpenAI(api_key="sk-proj-${head}T3BlbkFJ${tail}")`, secrets: [head, tail] };
  },
  'anthropic-api-key': () => {
    const random = randomString(93, BASE64URL);
    return { text: `export ANTHROPIC_KEY=sk-ant-api03-${random}AA`, secrets: [random] };
  },
  'stripe-secret-key': () => {
    const random = '51' + randomString(97, ALNUM);
    return { text: `stripe.api_key = 'sk_live_${random}'`, secrets: [random] };
  },
  jwt: () => {
    const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = base64url(JSON.stringify({ sub: randomUUID(), jti: randomString(16, ALNUM), iat: randomInt(1e9, 2e9) }));
    const signature = base64url(randomBytes(32));
    return { text: `session cookie: auth=${header}.${payload}.${signature}; Path=/`, secrets: [payload, signature] };
  },
  'bearer-token': () => {
    const token = base64url(randomBytes(32));
    return { text: `curl -H 'Authorization: Bearer ${token}' https://api.example.com/v1/me`, secrets: [token] };
  },
  'private-key-long': () => {
    const { pem, secrets } = pemKey('RSA PRIVATE KEY', 'MIIEowIBAAKCAQEA', 1588);
    return { text: `$ cat ~/.ssh/deploy_rsa\n${pem}`, secrets };
  },
  'private-key-short': () => {
    // An Ed25519 PKCS#8 key: a 64-character body, below the preset's 100-character minimum.
    const { pem, secrets } = pemKey('PRIVATE KEY', 'MC4CAQAwBQYDK2VwBCIEI', 64);
    return { text: pem, secrets };
  },
  'private-key-json-escaped': () => {
    const { pem, secrets } = pemKey('PRIVATE KEY', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 1624);
    const serviceAccount = { type: 'service_account', project_id: 'acme-prod', private_key_id: randomString(40, HEX), private_key: pem };
    return { text: JSON.stringify(serviceAccount), secrets };
  },
  'connection-string': () => {
    const password = randomPassword('-_.~!*');
    const url = pick([
      `postgres://app_user:${password}@db.internal:5432/app`,
      `mysql://root:${password}@10.0.0.12:3306/shop`,
      `mongodb+srv://svc:${password}@cluster0.abcde.mongodb.net/prod`,
      `redis://:${password}@cache.internal:6379/0`,
    ]);
    return { text: `DATABASE_URL=${url}`, secrets: [password] };
  },
  'password-assignment': () => {
    const password = randomPassword();
    const line = pick([`password=${password}`, `DB_PASSWORD=${password}`, `  password: ${password}`, `mysql -u root --password=${password} shop`]);
    return { text: line, secrets: [password] };
  },
  'token-assignment': () => {
    const token = pick([base64url(randomBytes(24)), randomString(40, ALNUM), randomPassword()]);
    const line = pick([`token=${token}`, `api_key=${token}`, `secret=${token}`, `SENTRY_AUTH_TOKEN=${token}`, `x-api-key: ${token}`, `AUTH_KEY=${token}`, `private_key: ${token}`]);
    return { text: line, secrets: [token] };
  },
  'json-password': () => {
    const password = randomPassword();
    return { text: JSON.stringify({ username: 'deploy', password, host: 'db.internal' }), secrets: [password] };
  },
} satisfies Record<string, () => { text: string; secrets: string[] }>;

export type SecretKind = keyof typeof SECRET_MAKERS;
export const SECRET_KINDS = Object.keys(SECRET_MAKERS) as SecretKind[];

export function plantSecret(kind: SecretKind): PlantedText {
  return { kind, ...SECRET_MAKERS[kind]() };
}

/** The ways content reaches the sidecar: as is, inside a JSON string, or JSON inside a JSON string. */
export type Wrapping = 'plain' | 'json' | 'json-in-json';
export const WRAPPINGS: readonly Wrapping[] = ['plain', 'json', 'json-in-json'];

export function wrap(text: string, wrapping: Wrapping): string {
  if (wrapping === 'plain') return text;
  const toolInput = JSON.stringify({ file_path: '/srv/app/.env', content: text });
  return wrapping === 'json' ? toolInput : JSON.stringify({ type: 'tool_use', input: toolInput });
}

// ---- content that holds no secret ----

const CODE_SNIPPETS = [
  `export async function getToken(client: AuthClient): Promise<string> {\n  const token = await client.fetchToken();\n  return token;\n}`,
  `const password = process.env.DB_PASSWORD;\nif (!password) throw new Error('DB_PASSWORD is not set');`,
  `def connect(api_key: str = os.environ["API_KEY"]) -> Client:\n    secret = load_secret(name="prod/db")\n    return Client(api_key=api_key, secret=secret)`,
  `func (s *Server) authenticate(r *http.Request) error {\n\ttoken := r.Header.Get("Authorization")\n\tif token == "" {\n\t\treturn ErrNoToken\n\t}\n\treturn nil\n}`,
  `interface Credentials { username: string; password: string; apiKey?: string }`,
  `for i in range(10):\n    print(f"step {i}: loss={loss:.4f}")`,
  `SELECT id, name, created_at FROM users WHERE org_id = $1 ORDER BY created_at DESC LIMIT 50;`,
  `secret_name = "prod/db"\nkms_key_alias = "alias/app"`,
  `const secretKey = config.secrets.signingKey;\nconst tokenTtl = 3600;`,
  `password_min_length: 12\ntoken_expiry_seconds: 86400\nsecret_rotation_days: 90`,
  `git clone https://github.com/acme/app.git && cd app && npm ci`,
  `DATABASE_URL=postgres://localhost:5432/app_dev`,
  `PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/home/dev\nPWD=/home/dev/projects/app2\nOLDPWD=/home/dev/projects/app1\nSHELL=/bin/bash`,
  `"usage": {"input_tokens": 2048, "output_tokens": 517, "cache_read_input_tokens": 12800, "cache_creation_input_tokens": 0}`,
  `The model counts tokens, not words; a secret is anything you would not paste into a public issue.`,
  `-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----`,
  `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@laptop`,
  `npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/@acme%2fmissing - Not found`,
  `  --token <value>   the token to use (default: $GITHUB_TOKEN)\n  --password-file   read the password from a file`,
  `if (headers.authorization?.startsWith('Bearer ')) { return verify(headers.authorization.slice(7)); }`,
  `const tokenizer = new Tokenizer({ vocab: 'cl100k_base' });`,
  `Run \`aws sts get-caller-identity\` to check which account you are using.`,
];

function negativeMakers(): Array<() => string> {
  return [
    () => pick(CODE_SNIPPETS),
    () => `sha256:${randomString(64, HEX)}  dist/app-${randomInt(1, 99)}.tar.gz`,
    () => `commit ${randomString(40, HEX)}\nAuthor: Dev <dev@example.com>\n\n    Fix flaky test`,
    () => Array.from({ length: 5 }, () => `${randomString(7, HEX)} ${pick(['Fix', 'Add', 'Refactor'])} ${pick(['parser', 'cache', 'tests'])}`).join('\n'),
    () => `{"id":"${randomUUID()}","session_id":"${randomUUID()}","parentUuid":"${randomUUID()}","type":"assistant"}`,
    () => `"integrity": "sha512-${randomBytes(64).toString('base64')}"`,
    () => `<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA${randomBytes(600).toString('base64')}">`,
    () => `traceparent: 00-${randomString(32, HEX)}-${randomString(16, HEX)}-01 trace_id=${randomString(32, HEX)} span_id=${randomString(16, HEX)}`,
    () => `{"tool_use_id":"toolu_01${randomString(22, ALNUM)}","requestId":"req_011C${randomString(20, ALNUM)}","message":{"id":"msg_01${randomString(22, ALNUM)}"}}`,
    () => `docker pull ghcr.io/acme/app@sha256:${randomString(64, HEX)}`,
    () => `etag: W/"${randomString(32, HEX)}"  x-request-id: ${randomUUID()}`,
  ];
}

/** One piece of content with no secret in it: code, hashes, ids, images, logs. */
export function negativeText(): string {
  return pick(negativeMakers())();
}

export interface Corpus {
  texts: string[];
  /** Every planted secret's random parts (see PlantedText.secrets). */
  secrets: string[];
  plantedCount: number;
}

/**
 * Texts totalling about `totalChars`: negative content, with one in `secretEvery` texts holding a
 * planted secret (every kind in turn, every wrapping in turn) between ordinary lines.
 */
export function mixedCorpus(totalChars: number, secretEvery = 20): Corpus {
  const texts: string[] = [];
  const secrets: string[] = [];
  let chars = 0;
  let planted = 0;
  while (chars < totalChars) {
    let text = negativeText();
    if (texts.length % secretEvery === 0) {
      const secret = plantSecret(SECRET_KINDS[planted % SECRET_KINDS.length]);
      const wrapping = WRAPPINGS[Math.floor(planted / SECRET_KINDS.length) % WRAPPINGS.length];
      text = wrap(`${negativeText()}\n${secret.text}\n${negativeText()}`, wrapping);
      secrets.push(...secret.secrets);
      planted++;
    }
    texts.push(text);
    chars += text.length;
  }
  return { texts, secrets, plantedCount: planted };
}

/**
 * Every 8-character piece of a planted secret that occurs in `output` (empty when nothing leaked).
 * Pieces that also occur in `background` (content that holds no secret, e.g. the input with the
 * planted secrets left out) are chance matches, not leaks: over gigabytes of hex and base64, some
 * 8-character windows of random secrets turn up by chance.
 */
export function findLeaks(output: string, secrets: readonly string[], background = ''): string[] {
  const pieces = new Set<string>();
  for (const secret of secrets) {
    for (let i = 0; i + 8 <= secret.length; i++) pieces.add(secret.slice(i, i + 8));
  }
  const leaks = new Set<string>();
  for (let i = 0; i + 8 <= output.length; i++) {
    const piece = output.slice(i, i + 8);
    if (pieces.has(piece) && !background.includes(piece)) leaks.add(piece);
  }
  return [...leaks];
}
