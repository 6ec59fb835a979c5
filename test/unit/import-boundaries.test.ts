import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { projectRoot } from '#infra/build.ts';

// The folders are the map: the domain folders of shared/ (chats, files, pdf, …; a file at the top
// of shared/ is a room of its own) import each other one way only, so there is an order in which
// every import points down. A cycle between rooms (files → pdf → files) is an import that runs
// back up; this test names each one. Likewise the domain never imports infra/ or functions/, and
// infra/ never imports functions/. Entry files stay thin, and the stale-run guard is written once.

const SHARED = join(projectRoot, 'shared');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs|js)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The project files a source file imports (static, dynamic and type-only imports alike). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return specs.flatMap((spec) => {
    const alias = /^#(shared|infra|functions|test)\/(.*)$/.exec(spec);
    if (alias) return [join(projectRoot, alias[1]!, alias[2]!)];
    return spec.startsWith('.') ? [normalize(join(dirname(file), spec))] : [];
  });
}

/** The room of a file under shared/: its domain folder, or the file itself at the top. */
const roomOf = (file: string) => relative(SHARED, file).split('/')[0]!;

test('no import between the domain folders of shared/ runs back up (their graph has no cycle)', () => {
  const edges = new Map<string, Map<string, string>>(); // room → room → an example import
  for (const file of sourceFiles(SHARED)) {
    for (const target of importsOf(file)) {
      if (!target.startsWith(`${SHARED}/`)) continue;
      const [from, to] = [roomOf(file), roomOf(target)];
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      edges.get(from)!.set(to, `${relative(projectRoot, file)} → ${relative(projectRoot, target)}`);
    }
  }
  // Depth-first search; a room met again while on the path closes a cycle.
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (room: string) => {
    state.set(room, 'open');
    path.push(room);
    for (const [next, example] of edges.get(room) ?? []) {
      if (state.get(next) === 'open') {
        const loop = [...path.slice(path.indexOf(next)), next];
        cycles.push(`${loop.join(' → ')} (closed by ${example})`);
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(room, 'done');
  };
  for (const room of edges.keys()) if (!state.has(room)) visit(room);
  expect(cycles).toEqual([]);
  expect(edges.size).toBeGreaterThan(5); // the graph was read
});

// The layers, top to bottom (docs/ARCHITECTURE.md, The map): functions/ → shared/http (the HTTP
// layer, built on the auth, users and limits domains) → the domain folders of shared/ → the base
// (shared/*.ts, shared/config, shared/observability, shared/openapi). An import only points down a layer (or
// sideways between domains, which the test above keeps acyclic). infra/ stands above them all and
// the local runtime (infra/local) apart: infra/ reads shared/ and never the functions' code, and only
// the local runtime imports infra/local. The OpenAPI contracts (shared/<domain>/contracts.ts) are
// the generator's alone (infra/openapi.ts), so no function bundle builds them.
const BASE_ROOMS = ['config', 'observability', 'openapi'];
type Layer = 'functions' | 'http' | 'domain' | 'base' | 'infra' | 'local' | 'test' | 'contracts';

function layerOf(file: string): Layer | undefined {
  const [top, second = ''] = relative(projectRoot, file).split('/');
  if (top === 'functions') return 'functions';
  if (top === 'test') return 'test';
  if (top === 'infra') return second === 'local' ? 'local' : 'infra';
  if (top !== 'shared') return undefined; // a path in a comment's example, not a project file
  if (
    /^shared\/[^/]+\/contracts\.ts$/.test(relative(projectRoot, file)) ||
    file === join(SHARED, 'openapi', 'contract.ts')
  )
    return 'contracts';
  if (second === 'http') return 'http';
  if (second.includes('.') || BASE_ROOMS.includes(second)) return 'base';
  return 'domain';
}

/** What each layer may import (besides itself). */
const mayImport: Record<Exclude<Layer, 'test'>, Layer[]> = {
  functions: ['http', 'domain', 'base'],
  http: ['domain', 'base'],
  domain: ['base'],
  base: [],
  contracts: ['contracts', 'domain', 'base'],
  infra: ['contracts', 'http', 'domain', 'base'],
  local: ['infra', 'contracts', 'http', 'domain', 'base'],
};

/** Every import that points the wrong way, as `file → target (layer → layer)`. */
function importsAgainstTheLayers(): string[] {
  const wrong: string[] = [];
  for (const dir of ['functions', 'shared', 'infra']) {
    for (const file of sourceFiles(join(projectRoot, dir))) {
      const from = layerOf(file) as Exclude<Layer, 'test'>;
      for (const target of importsOf(file)) {
        const to = layerOf(target);
        if (to && to !== from && !mayImport[from].includes(to))
          wrong.push(`${relative(projectRoot, file)} → ${relative(projectRoot, target)} (${from} → ${to})`);
      }
    }
  }
  return wrong;
}

test('every import points down the layers: functions → HTTP layer → domain → base; infra above, infra/local apart', () => {
  expect(importsAgainstTheLayers()).toEqual([]);
  expect(sourceFiles(join(projectRoot, 'functions')).length).toBeGreaterThan(20); // the files were read
});

// Readers turn bytes into parts (docs/DECISIONS.md "Documents, not only PDFs"): the pipeline
// uses them, never the other way round, so a format is a reader and its registration.
test('readers (shared/readers, shared/pdf) never import the ingestion pipeline', () => {
  const wrong = ['readers', 'pdf'].flatMap((room) =>
    sourceFiles(join(SHARED, room)).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(join(SHARED, 'ingestion', '/')))
        .map((target) => `${relative(projectRoot, file)} → ${relative(projectRoot, target)}`),
    ),
  );
  expect(wrong).toEqual([]);
  expect(sourceFiles(join(SHARED, 'ingestion')).length).toBeGreaterThan(10); // the pipeline was found
});

// An entry file composes its dependencies and calls one domain function: it neither reads nor
// writes through a repository itself, and stays short enough to read at a glance.
test('entry files stay thin: at most 40 lines, no repository call', () => {
  const entries = sourceFiles(join(projectRoot, 'functions'));
  expect(entries.length).toBeGreaterThan(20);
  const long = entries.filter((f) => readFileSync(f, 'utf8').trimEnd().split('\n').length > 40);
  const repositoryCalls = entries.filter((f) =>
    /\b(chats|messages|files|orders|products|users|attachments|chunks)\.(get|put|list|create|update|delete)\w*\(/.test(
      readFileSync(f, 'utf8'),
    ),
  );
  expect({ long: long.map((f) => relative(projectRoot, f)), repositoryCalls }).toEqual({
    long: [],
    repositoryCalls: [],
  });
});

test('the stale-run guard is written once: no stage checks or cleans up its run itself', () => {
  const guard = join(SHARED, 'ingestion', 'run-stage.ts');
  const others = sourceFiles(SHARED).filter(
    (f) => f !== guard && /(?<!function )\b(isCurrentRun|cleanUpStaleRun|completeRun)\(/.test(readFileSync(f, 'utf8')),
  );
  expect(others.map((f) => relative(projectRoot, f))).toEqual([]);
});

// Payment providers (docs/DECISIONS.md "Payment providers"): a provider's API, event names,
// signature scheme and status words stay in its folder; the orders domain and the entry files speak
// PaymentProvider, and shared/payments/providers.ts alone names a provider (its registration).
test("Stripe's words stay in shared/payments/stripe/; only the registration names it", () => {
  const stripe = join(SHARED, 'payments', 'stripe', '/');
  const registration = join(SHARED, 'payments', 'providers.ts');
  const files = [...sourceFiles(SHARED), ...sourceFiles(join(projectRoot, 'functions'))];
  const leaks = files
    .filter((f) => !f.startsWith(stripe) && f !== registration)
    .filter((f) => /stripe|Stripe|STRIPE|payment_intent|charge\.\w+|client_secret/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(projectRoot, f));
  expect(leaks).toEqual([]);
  expect(sourceFiles(stripe).length).toBeGreaterThan(3); // the provider was found
});
