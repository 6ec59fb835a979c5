// Rewriting a dependency's source as it is bundled (pdf.js's worker, middy's streaming module):
// each rewrite names the one place it changes, so an upgrade that moves it fails the build rather
// than shipping the dependency unchanged.

/**
 * `source` with the one occurrence of `find` replaced; throws, naming `what` is patched and `why`,
 * when there is none or more than one.
 */
export function replaceOnce(source: string, find: string, replacement: string, what: string, why: string): string {
  const at = source.indexOf(find);
  if (at < 0 || source.indexOf(find, at + 1) >= 0)
    throw new Error(`${what}: expected exactly one "${find.trim().split('\n')[0]}" to patch (${why})`);
  return source.slice(0, at) + replacement + source.slice(at + find.length);
}
