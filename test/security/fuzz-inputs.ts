import fc from 'fast-check';
import { createId } from '#shared/ids.ts';
import { isCuidSchema, unwrap, type JsonSchema } from './routes-under-test.ts';

// Building blocks of the hostile-input suite: valid seeds derived from a route's JSON Schema,
// and the arbitraries (fast-check) of each kind of bad input.

/** Values the seed uses for fields of these names (ids of records that exist, a refused URL). */
export type Hints = Record<string, unknown>;

/** A valid example of a JSON Schema: required fields only (or all), smallest allowed values. */
export function sample(schema: JsonSchema | undefined, name: string, hints: Hints, all = false): unknown {
  if (name in hints) return hints[name];
  const s = unwrap(schema);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  switch (s.type) {
    case 'string':
      if (isCuidSchema(s)) return createId();
      if (s.pattern === '^[A-Z]{3}$') return 'EUR';
      return 'fuzz'.padEnd(Math.max(4, s.minLength ?? 0), 'z').slice(0, s.maxLength ?? 4);
    case 'integer':
    case 'number':
      return Math.max(1, s.minimum ?? 1, s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'array':
      return s.minItems ? [sample(s.items, '', hints, all)] : [];
    case 'object': {
      const keys = all ? Object.keys(s.properties ?? {}) : ((s.required ?? []) as string[]);
      return Object.fromEntries(keys.map((k) => [k, sample(s.properties?.[k], k, hints, all)]));
    }
    default:
      return null;
  }
}

/** Paths (from the body root) of every leaf field, descending into objects and the first item of arrays. */
export function fieldPaths(
  schema: JsonSchema,
  prefix: (string | number)[] = [],
): { path: (string | number)[]; schema: JsonSchema }[] {
  const s = unwrap(schema);
  if (s.type === 'object' && s.properties) {
    return Object.entries(s.properties as Record<string, JsonSchema>).flatMap(([k, v]) => {
      const child = unwrap(v);
      return [
        { path: [...prefix, k], schema: child },
        ...(child.type === 'object' || child.type === 'array' ? fieldPaths(child, [...prefix, k]) : []),
      ];
    });
  }
  if (s.type === 'array' && s.items) {
    const item = unwrap(s.items);
    return [
      { path: [...prefix, 0], schema: item },
      ...(item.type === 'object' ? fieldPaths(item, [...prefix, 0]) : []),
    ];
  }
  return [];
}

/** A copy of `base` with `value` at `path`, creating missing containers from the schema's samples. */
export function setAt(
  base: unknown,
  path: (string | number)[],
  value: unknown,
  schema: JsonSchema,
  hints: Hints,
): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const s = unwrap(schema);
  if (typeof head === 'number') {
    const list = Array.isArray(base) ? [...base] : [];
    const itemSchema = unwrap(s.items);
    const current = list[head] ?? sample(itemSchema, '', hints);
    list[head] = setAt(current, rest, value, itemSchema, hints);
    return list;
  }
  const obj: Record<string, unknown> =
    base && typeof base === 'object' && !Array.isArray(base) ? { ...(base as object) } : {};
  const childSchema = unwrap(s.properties?.[head]);
  const current = head in obj ? obj[head] : sample(childSchema, head, hints);
  define(obj, head, setAt(current, rest, value, childSchema, hints));
  return obj;
}

/** Own property, even for `__proto__`. */
export function define(obj: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export function withoutKeys(base: unknown, keys: string[]): unknown {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base as object)) if (!keys.includes(k)) define(out, k, v);
  return out;
}

/** Whether a string is well-formed UTF-16 (no lone surrogate). */
export const isWellFormed = (s: string) => !/\p{Cs}/u.test(s);

// ---- arbitraries of bad values ----

const json = fc.jsonValue({ maxDepth: 2 });

/** A value of any JSON type (the caller does not know which one the field wants). */
export const anyJsonValue = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -1,
    1.5,
    1e308,
    -0,
    Number.MAX_SAFE_INTEGER + 2,
    true,
    false,
    null,
    '',
    '0',
    'true',
    'null',
    [],
    {},
  ),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.array(json, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 3 }),
);

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const control = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));
const c1 = fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c));
const oddCodePoint = fc.constantFrom(
  '\u0000',
  '\u202e',
  '\u202d',
  '\ufeff',
  '\u200b',
  '\u200d',
  '\u2028',
  '\u2029',
  '\ufffe',
  '\uffff',
  '\ufffd',
  'e\u0301',
  '🏳️‍🌈',
  '😀',
  '𝕏',
  'ﷺ',
  'ǅ',
  'İ',
  'ß',
  '\u0085',
  '\u00a0',
  '\u3000',
  '\\',
  '"',
  "'",
  '`',
);
/** Text in every corner of Unicode: controls, NUL, lone surrogates, bidi overrides, joiners, astral. */
export const weirdText = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  fc.string({
    unit: fc.oneof(control, c1, oddCodePoint, loneSurrogate, fc.constantFrom('a', ' ')),
    minLength: 1,
    maxLength: 30,
  }),
  fc.constantFrom(
    '\u0000',
    'nul\u0000byte',
    '\ud800',
    '\udfff',
    'a\ud83d',
    '\ude00z',
    '\r\n',
    '\t',
    ' ',
    '%00',
    '%s%n',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell look-alike, sent as plain text
    '${jndi:ldap://127.0.0.1/a}',
    '<script>alert(1)</script>',
    "'; DROP TABLE users; --",
    '{{7*7}}',
    '../../etc/passwd',
    'USER#x',
    'PK',
    '\u202egnp.exe',
  ),
);

/** Strings made from a fresh CUID2 (each run's own). */
const madeFromAnId = (variants: (id: string) => string[]) =>
  fc
    .constant(null)
    .map(() => createId())
    .chain((id) => fc.constantFrom(...variants(id)));

/** Strings that are not CUID2s (length, case, alphabet, injection attempts, look-alikes). */
export const invalidCuid = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    'null',
    'undefined',
    '0',
    '-1',
    'a'.repeat(23),
    'a'.repeat(25),
    'A'.repeat(24),
    `1${'a'.repeat(23)}`,
    `${'a'.repeat(23)}\u0000`,
    `${'a'.repeat(23)}\n`,
    'ａ'.repeat(24),
    `${'a'.repeat(23)}#`,
    "' OR '1'='1",
    '{"$ne":null}',
    '../../etc/passwd',
    '*',
    '%',
    'a%2Fb',
  ),
  madeFromAnId((id) => [
    id.toUpperCase(),
    id.slice(1),
    `${id}a`,
    `${id}#META`,
    `USER#${id}`,
    `${id.slice(0, 12)}-${id.slice(13)}`,
    ` ${id}`,
    `${id} `,
  ]),
);

/** URLs the service must refuse without fetching (wrong scheme, credentials, private or loopback hosts, junk). */
export const invalidUrl = fc.oneof(
  fc.constantFrom(
    'not a url',
    'ftp://127.0.0.1/x.pdf',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:application/pdf;base64,JVBERi0=',
    'http://',
    'https://',
    'http:///x.pdf',
    'http://user:pw@127.0.0.1/x.pdf',
    'gopher://127.0.0.1:70/_x',
    'http://[::1',
    'http://127.0.0.1:99999/',
    'http://0x7f.1/x.pdf',
    'http://2130706433/x.pdf',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::1]/x.pdf',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://10.0.0.1/x.pdf',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://224.0.0.1/',
    '//127.0.0.1/x.pdf',
    'http:\\\\127.0.0.1\\x.pdf',
    'HTTP://LOCALHOST/x.pdf',
    ' http://127.0.0.1/ ',
    'http://localhost:1/x.pdf',
    'http://127.0.0.1:0/',
    'ws://127.0.0.1/',
    'http://%31%32%37.0.0.1/',
  ),
  fc.string({ maxLength: 60 }),
  fc.tuple(fc.constantFrom('http', 'https', 'HTTP', 'ftp', 'file', ''), weirdText).map(([s, rest]) => `${s}://${rest}`),
);

export const truncatedOrBroken = (valid: string) =>
  fc.oneof(
    fc.integer({ min: 0, max: Math.max(0, valid.length - 1) }).map((n) => valid.slice(0, n)),
    fc.constantFrom(',', '}', ']', 'x', '\u0000', '{}', ' null', '/*c*/').map((suffix) => valid + suffix),
    fc.constant(valid.replaceAll('"', "'")),
    fc.constant(valid.replace(/"(\w+)":/g, '$1:')),
    fc.constant(`\ufeff${valid}`),
    fc.constantFrom(
      'NaN',
      'undefined',
      '{"a":1,}',
      '[1,]',
      '"unterminated',
      '{"a":"\\x41"}',
      '{',
      '}',
      '[',
      '{"a"}',
      "{'a':1}",
      '01',
      '--1',
      '1e',
      'tru',
      'nul',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 50 }),
  );

/** Content types that are not JSON (or look like it without being it). */
export const notJsonContentType = fc.oneof(
  fc.constantFrom(
    'text/plain',
    'text/html',
    'application/xml',
    'text/xml',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    'application/jsonx',
    'json',
    'application/',
    'application/json-patch',
    'text/json',
    'application/ json',
    'image/png',
    'application/pdf',
    'application/javascript',
    '*/*',
    'application',
    'xjson/application',
  ),
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 40,
  }),
);

/** Raw (already percent-encoded) path segments meant to confuse routing or decoding. */
export const hostileSegment = fc.oneof(
  fc.constantFrom(
    '%2F',
    'a%2Fb',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    '%2E',
    '.',
    '..',
    '...',
    '%00',
    '%ZZ',
    '%',
    '%ED%A0%80',
    '%C0%AE%C0%AE',
    '%5C..%5C',
    '%252F',
    '%2e%2e%2f',
    '~',
    '*',
    '%20',
    '+',
    ';',
    '%3B',
    '%3F',
    '%23',
    '%FF',
    '%C3%28',
    '%E2%80%AE',
    '@',
    '!',
    "'",
    '(',
    ')',
  ),
  madeFromAnId((id) => [
    `${id}%2F..`,
    `${id};x=1`,
    `${id}%3Fa=1`,
    `${id}%23frag`,
    `${id}%00`,
    `${id.toUpperCase()}`,
    `${id}.json`,
  ]),
  fc
    .string({ maxLength: 30 })
    .filter(isWellFormed)
    .map((s) => encodeURIComponent(s)),
);

/** Query strings: wrong limits, forged cursors, unknown keys, repeated keys. */
export const hostileQuery = (validCursor?: string) => {
  const limit = fc.oneof(
    fc.constantFrom(
      '',
      '0',
      '-1',
      '101',
      '1.5',
      'abc',
      '1e3',
      '0x10',
      '9'.repeat(400),
      'NaN',
      'Infinity',
      ' 5',
      '5 ',
      '[]',
      'null',
      '١٠',
    ),
    fc.integer().map(String),
  );
  const b64 = (s: string) => Buffer.from(s).toString('base64url');
  const cursor = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom(
      '!!!',
      '====',
      'e30',
      b64('[]'),
      b64('null'),
      b64('{"PK":"USER#x"}'),
      b64('{"PK":{"S":"x"},"SK":"y"}'),
      'a'.repeat(3000),
    ),
    fc.jsonValue({ maxDepth: 2 }).map((v) => b64(JSON.stringify(v))),
    ...(validCursor ? [fc.integer({ min: 1, max: validCursor.length - 1 }).map((n) => validCursor.slice(0, n))] : []),
  );
  const key = fc.oneof(
    fc.constantFrom('limit', 'cursor', 'limit', 'cursor', 'offset', 'userId', '__proto__', 'limit[]'),
    fc.string({ minLength: 1, maxLength: 10 }),
  );
  return fc
    .array(fc.tuple(key, fc.oneof(limit, cursor, weirdText.filter(isWellFormed))), { minLength: 1, maxLength: 4 })
    .map((pairs) => new URLSearchParams(pairs).toString());
};

/** Authorization header values that are not a valid bearer token of this service. */
export const badAuthorization = (validToken: string) =>
  fc.oneof(
    fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }),
    fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => `Bearer ${s}`),
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Bearer  ',
      'Basic dXNlcjpwYXNz',
      'Token abc',
      'Bearer null',
      'Bearer undefined',
      `Bearer ${'a'.repeat(7000)}`,
    ),
    fc.integer({ min: 1, max: validToken.length - 1 }).map((n) => `Bearer ${validToken.slice(0, n)}`),
    fc.constantFrom(
      `Bearer ${validToken}x`,
      `Bearer x${validToken}`,
      `Bearer ${validToken}.x`,
      `Basic ${validToken}`,
      `${validToken}`,
    ),
    // A changed character, never the last of a segment (its low bits may be padding that decodes the same).
    fc
      .nat({ max: validToken.length - 2 })
      .filter((i) => validToken[i + 1] !== '.')
      .map((i) => {
        const c = validToken[i] === 'A' ? 'B' : 'A';
        return `Bearer ${validToken.slice(0, i)}${c}${validToken.slice(i + 1)}`;
      }),
  );

/** A valid body for a route (required fields, else all fields), checked against its schema. */
export function validBody(
  route: {
    name: string;
    bodySchema?: JsonSchema;
    contract: { body?: { safeParse(v: unknown): { success: boolean } } };
  },
  hints: Hints,
): unknown {
  if (!route.bodySchema || !route.contract.body) return undefined;
  for (const all of [false, true]) {
    const body = sample(route.bodySchema, '', hints, all);
    if (route.contract.body.safeParse(body).success) return body;
  }
  throw new Error(`no valid body for ${route.name}: ${JSON.stringify(sample(route.bodySchema, '', hints, true))}`);
}
