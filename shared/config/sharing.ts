import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int, optionalUrl } from './fields.ts';

// Sharing (POST /chat/{chatId}/share and the public read).

export const sharingSettings = settingsPiece({
  // Sharing (POST /chat/{chatId}/share): the largest snapshot (its JSON, bytes); the public read
  // answers it whole in one buffered response, which Lambda caps at 6 MB after escaping it again.
  SHARE_MAX_BYTES: z._default(int(1024, 2 * 1024 * 1024), 2 * 1024 * 1024),
  // The base of the share links (`<base>/shared/<shareId>`), e.g. a custom domain's
  // https://api.example.com/api/v1; unset: the API's own URL, from the request.
  PUBLIC_BASE_URL: optionalUrl,
});
