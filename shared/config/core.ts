import * as z from '../zod.ts';
import { int, optionalUrl, str } from './fields.ts';
import type { Config } from './all.ts';

// The functions' settings, parsed once per cold start. Defaults work locally; a bad value stops
// start-up with a message naming the variable.
//
// One schema in pieces, one per concern: the core below (every function reads it) and one module
// per concern beside this one. A module that reads a concern's settings imports its piece
// (`import '../config/ai.ts'`), so a function's bundle builds and parses only the pieces its code
// can read: building the whole schema was most of the configuration's cold-start cost.
// all.ts is the whole schema (the stack's synth check, the local runtime, tests).
// config() parses the pieces imported so far; a piece imported later (a chunk loaded on first
// use) is parsed as it is imported, and reading a setting whose piece no module imported throws.

type Shape = z.core.$ZodLooseShape;
type Settings = Record<string, unknown>;
interface Piece {
  schema: z.ZodMiniObject<Shape>;
  conflicts?: (settings: Settings) => string[];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Every setting of the service (the union of the pieces; the type only). */
export type { Config };

const pieces: Piece[] = [];
const known = new Set<string>();
let parsed: Settings | undefined;

/** Empty strings mean "unset" (CloudFormation and shells both produce them). */
const presentIn = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));

/** Parses an environment with some pieces; throws one ConfigError naming every bad variable. */
export function parseSettings(from: readonly Piece[], env: NodeJS.ProcessEnv): Settings {
  const present = presentIn(env);
  const settings: Settings = {};
  const problems: string[] = [];
  for (const piece of from) {
    const result = piece.schema.safeParse(present);
    if (result.success) Object.assign(settings, result.data);
    else problems.push(...result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  if (problems.length) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  const conflicts = from.flatMap((piece) => piece.conflicts?.(settings) ?? []);
  if (conflicts.length) throw new ConfigError(`Invalid configuration:\n  ${conflicts.join('\n  ')}`);
  return settings;
}

/** The pieces imported in this process, in order. */
export const importedPieces = (): readonly Piece[] => pieces;

/**
 * Declares one concern's settings (its piece of the schema) and registers it with config().
 * `conflicts` names settings of the piece that are valid alone but not together.
 */
export function settingsPiece<S extends Shape>(
  shape: S,
  conflicts?: (settings: z.output<z.ZodMiniObject<S>>) => string[],
): z.ZodMiniObject<S> {
  const schema = z.object(shape) as unknown as z.ZodMiniObject<S>;
  const piece: Piece = { schema, conflicts: conflicts as Piece['conflicts'] };
  pieces.push(piece);
  for (const name of Object.keys(shape)) known.add(name);
  // Imported after the cold start's parse (a chunk loaded on first use): checked now.
  if (parsed) Object.assign(parsed, parseSettings([piece], process.env));
  return schema;
}

/** The settings every function reads (clients, logging, the HTTP envelope). */
export const coreSettings = settingsPiece({
  AWS_REGION: z._default(str(), 'us-east-1'),
  // Set by the stack (deployed) or the local runtime; an empty one is a deployment bug.
  TABLE_NAME: str(),
  BUCKET_NAME: z.optional(str()),
  // Emulator endpoints; unset in AWS.
  DYNAMODB_ENDPOINT: optionalUrl,
  S3_ENDPOINT: optionalUrl,
  SQS_ENDPOINT: optionalUrl,
  SECRETS_MANAGER_ENDPOINT: optionalUrl,

  LOG_LEVEL: z._default(
    z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'debug', 'info', 'warn', 'error', 'silent']),
    'INFO',
  ),
  CORS_ALLOW_ORIGIN: z._default(str(), '*'),
  MAX_BODY_BYTES: z._default(int(1024, 10 * 1024 * 1024), 256 * 1024),
});

const SETTING_NAME = /^[A-Z][A-Z0-9_]*$/;

let cached: Config | undefined;

/**
 * The configuration of this cold start: the pieces this function's modules imported. Reading a
 * setting of a piece none of them imported throws (it would otherwise read as unset).
 */
export function config(): Config {
  if (!cached) {
    parsed = parseSettings(pieces, process.env);
    cached = new Proxy(parsed, {
      get(target, name, receiver) {
        if (typeof name === 'string' && SETTING_NAME.test(name) && !known.has(name)) {
          throw new ConfigError(`${name}: read, but no module of this function imports its piece of shared/config/`);
        }
        return Reflect.get(target, name, receiver);
      },
    }) as Config;
  }
  return cached;
}
