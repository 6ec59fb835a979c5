// A file download's headers (RFC 6266): `filename` for old clients, in printable ASCII with the
// characters that would end or break the quoted string replaced, and `filename*` (RFC 8187) with
// the name as it is, percent-encoded UTF-8. Neither can carry a CR or LF into the header.

const UNSAFE_IN_QUOTES = /[^\x20-\x7e]|["\\%]/g;

/** `attachment; filename="…"; filename*=UTF-8''…` for a file name (any characters). */
export function contentDisposition(name: string): string {
  const fileName = name.replace(/\p{Cs}/gu, '\uFFFD'); // a lone surrogate has no UTF-8 form to encode
  const fallback = fileName.replace(UNSAFE_IN_QUOTES, '_');
  // encodeURIComponent leaves ' ( ) * ! unencoded; RFC 8187's attr-char allows only `!` of them.
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
