import * as z from '../zod.ts';
import { idParam } from '../schemas.ts';

export const exportIdParams = z.strictObject({ exportId: idParam('export') });
