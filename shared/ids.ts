import { randomFillSync } from 'node:crypto';

// Ids of records and requests: 24 characters, a lowercase letter then 23 of [0-9a-z] (the shape
// of the cuid2 ids the service issued before, which the API's id pattern accepts), drawn from the
// CSPRNG: about 123 bits, unguessable and, at any volume this service sees, unique. cuid2 hashed
// its entropy with SHA3-512 in JavaScript and a big-number conversion, which cost every function
// about 15 ms of CPU at cold start (docs/DECISIONS.md, The API functions' import time).

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Bytes below these are used (a multiple of the alphabet's size), others drawn again: no bias. */
const LETTER_LIMIT = 256 - (256 % LETTERS.length);
const DIGIT_LIMIT = 256 - (256 % DIGITS.length);

const pool = new Uint8Array(1024);
let next = pool.length;

/** One random byte from a pool refilled from the CSPRNG. */
function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** A byte below `limit`, by rejection. */
function below(limit: number): number {
  for (;;) {
    const b = randomByte();
    if (b < limit) return b;
  }
}

/** A new id: a lowercase letter, then 23 characters of [0-9a-z]. */
export function createId(): string {
  let id = LETTERS[below(LETTER_LIMIT) % LETTERS.length]!;
  for (let k = 1; k < 24; k++) id += DIGITS[below(DIGIT_LIMIT) % DIGITS.length]!;
  return id;
}
