import { config, locales } from 'zod/mini';

// zod/mini, not classic zod: the classic API costs ~15 ms of module evaluation per cold start
// (bench cold-start). Every schema imports zod from here (`import * as z from '../zod.ts'`, which
// lets the bundler keep only what is used) so the English messages clients see ("Too small:
// expected number to be >=1") are configured once: zod/mini loads no locale by itself. (The
// bundles carry English only, see infra/build.ts.)
config(locales.en());
// No generated parsers: zod compiles each object schema with `new Function` on its first parse,
// which pays back only after many parses; a Lambda instance parses each schema a few times, and
// the compile sits in the cold start (the config) and in each route's first request.
config({ jitless: true });

export * from 'zod/mini';
