import '../config/collections.ts';
import * as z from '../zod.ts';
import { config } from '../config.ts';
import { idParam, pageQuerySchema } from '../schemas.ts';
import { example } from '../openapi/examples.ts';

// The cap is a setting (COLLECTION_NAME_MAX_CHARS), read at validation time, not at import.
const nameSchema = () =>
  z.string().check(
    z.trim(),
    z.minLength(1),
    z.describe('1 to COLLECTION_NAME_MAX_CHARS characters (default 120), trimmed'),
    z.superRefine((name, ctx) => {
      const max = config().COLLECTION_NAME_MAX_CHARS;
      if (name.length > max) ctx.addIssue({ code: 'custom', message: `Must be at most ${max} characters` });
    }),
  );

export const createCollectionBody = z.strictObject({ name: nameSchema() }).check(example({ name: 'Compilers' }));
export const updateCollectionBody = z.strictObject({ name: nameSchema() }).check(example({ name: 'Compiler papers' }));

export const collectionParams = z.strictObject({ id: idParam('collection') });
export const collectionFileParams = z.strictObject({ id: idParam('collection'), fileId: idParam('file') });
export const listCollectionsQuery = pageQuerySchema;
