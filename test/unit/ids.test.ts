import { createId } from '#shared/ids.ts';
import { cuidSchema } from '#shared/schemas.ts';

// Ids from the CSPRNG in the shape the API's id pattern accepts (docs/DECISIONS.md, The API
// functions' import time).

test('an id is a lowercase letter then 23 of [0-9a-z], accepted by the id pattern; 100,000 ids are distinct', () => {
  const ids = Array.from({ length: 100_000 }, createId);
  for (const id of ids.slice(0, 1000)) {
    expect(id).toMatch(/^[a-z][0-9a-z]{23}$/);
    expect(cuidSchema.safeParse(id).success).toBe(true);
  }
  expect(new Set(ids).size).toBe(ids.length);
});

test('every character is equally likely in every position (no modulo bias): chi-squared within bounds', () => {
  const n = 72_000;
  const counts = Array.from({ length: 24 }, () => new Map<string, number>());
  for (let k = 0; k < n; k++) {
    const id = createId();
    for (let p = 0; p < 24; p++) counts[p]!.set(id[p]!, (counts[p]!.get(id[p]!) ?? 0) + 1);
  }
  // Chi-squared with 25 (first position) or 35 degrees of freedom, against critical values of
  // p ≈ 10⁻⁷ each (81.2, 97.7: a false failure about once in 400,000 runs); a modulo bias, as
  // `byte % 36` without rejection gives, scores about 175 at this count.
  const chiSquared = (observed: Map<string, number>, symbols: number) =>
    [...observed.values()].reduce((sum, o) => sum + (o - n / symbols) ** 2 / (n / symbols), 0);
  expect(counts[0]!.size).toBe(26);
  expect(chiSquared(counts[0]!, 26)).toBeLessThan(81.2);
  for (let p = 1; p < 24; p++) {
    expect(counts[p]!.size).toBe(36);
    expect(chiSquared(counts[p]!, 36)).toBeLessThan(97.7);
  }
});
