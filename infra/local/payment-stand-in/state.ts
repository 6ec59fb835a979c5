import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// What the payment provider's stand-in (infra/local/payment-provider.ts) keeps: its keys, in
// DATA_DIR/local-payments.json with its URL for `npm run pay`, and its intents, charges,
// idempotency keys and the events not yet acknowledged, in DATA_DIR/local-payments-state.json,
// written after every change. Without a DATA_DIR (tests), fresh keys and state in memory.

export const LOCAL_PAYMENTS_FILE = 'local-payments.json';
const STATE_FILE = 'local-payments-state.json';

export const SUCCEEDING_CARD = 'pm_card_visa';
export const DECLINED_CARD = 'pm_card_chargeDeclined';

export type Json = Record<string, unknown>;

export interface LocalPaymentsFile {
  secretKey: string;
  webhookSecret: string;
  /** What a browser holds (the provider's publishable key): it may only confirm an intent whose client secret it has. */
  publishableKey?: string;
  /** Where the stand-in of the running npm start listens (changes with each start). */
  apiUrl?: string;
}

export interface ProviderEvent {
  id: string;
  type: string;
  /** The exact body posted (and signed). */
  body: string;
}

/** The answer first given to an idempotency key, and the request it answered. */
interface IdempotentAnswer {
  fingerprint: string;
  status: number;
  body: string;
}

interface SavedState {
  intents: Json[];
  charges: Json[];
  idempotent: [string, IdempotentAnswer][];
  unacknowledged: ProviderEvent[];
}

export interface StandInState {
  intents: Map<string, Json>;
  charges: Map<string, Json>;
  idempotent: Map<string, IdempotentAnswer>;
  /** Events made and not yet acknowledged by the service (kept across restarts, delivered again). */
  unacknowledged: Map<string, ProviderEvent>;
  /** Writes the state whole, then renames it into place (a reader, or a crash, never sees half of it). */
  save(): void;
}

export const randomId = (prefix: string, length = 24) =>
  `${prefix}_${randomBytes(length).toString('base64url').replace(/[-_]/g, '').slice(0, length).padEnd(length, '0')}`;

/** The provider's clock: seconds since the epoch. */
export const now = () => Math.floor(Date.now() / 1000);

/** The stand-in's keys: those kept in dataDir (made the first time). */
export async function keysIn(dataDir: string | undefined): Promise<Required<Omit<LocalPaymentsFile, 'apiUrl'>>> {
  const fresh = {
    secretKey: randomId('sk_test', 32),
    webhookSecret: randomId('whsec', 32),
    publishableKey: randomId('pk_test', 32),
  };
  if (!dataDir) return fresh;
  try {
    const kept = JSON.parse(await readFile(join(dataDir, LOCAL_PAYMENTS_FILE), 'utf8')) as LocalPaymentsFile;
    if (kept.secretKey && kept.webhookSecret) return { ...fresh, ...kept };
  } catch {
    // none yet (or unreadable): new keys
  }
  return fresh;
}

/** Reads DATA_DIR/local-payments.json (what `npm run pay` uses). */
export async function readLocalPayments(dataDir: string): Promise<LocalPaymentsFile> {
  return JSON.parse(await readFile(join(dataDir, LOCAL_PAYMENTS_FILE), 'utf8')) as LocalPaymentsFile;
}

/** The state kept in dataDir (as the last run left it), or an empty one in memory. */
export async function loadState(dataDir: string | undefined): Promise<StandInState> {
  const statePath = dataDir && join(dataDir, STATE_FILE);
  const saved = statePath
    ? ((await readFile(statePath, 'utf8').then(JSON.parse, () => undefined)) as SavedState | undefined)
    : undefined;
  const state: StandInState = {
    intents: new Map(saved?.intents.map((i) => [String(i.id), i])),
    charges: new Map(saved?.charges.map((c) => [String(c.id), c])),
    idempotent: new Map(saved?.idempotent),
    unacknowledged: new Map(saved?.unacknowledged.map((e) => [e.id, e])),
    save() {
      if (!statePath) return;
      const whole: SavedState = {
        intents: [...state.intents.values()],
        charges: [...state.charges.values()],
        idempotent: [...state.idempotent],
        unacknowledged: [...state.unacknowledged.values()],
      };
      writeFileSync(`${statePath}.tmp`, JSON.stringify(whole));
      renameSync(`${statePath}.tmp`, statePath);
    },
  };
  return state;
}
