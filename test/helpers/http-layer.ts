import { Readable } from 'node:stream';
import type { HttpRoute } from '#infra/routes.ts';
import { httpHandler, type HttpLayer } from '#shared/http/handler.ts';

// Handlers made for tests of the HTTP layer itself, run behind the local gateway: routes no caller
// check stands in front of, and a streamed response whose end the test decides, so it can look
// between the first event and the end without waiting for a clock.

/** A route made for the test: `idp`, so no service token is needed; enveloped unless `over` says. */
export const testRoute = (over: Partial<HttpRoute> & Pick<HttpRoute, 'method' | 'path'>): HttpRoute => ({
  auth: 'idp',
  shape: 'envelope',
  access: {},
  ...over,
});

/**
 * POST /stream, streamed through `layer`: an event stream of `first`, then `last` once the test
 * calls `release()` (for the latest response). Its `route` and `handler` are served by the gateway.
 */
export function heldStream(layer: HttpLayer, first: string, last: string) {
  const route = testRoute({ method: 'POST', path: '/stream', streaming: true });
  let release: () => void = () => undefined;
  const handler = httpHandler(
    route,
    {},
    async () => {
      const released = new Promise<void>((resolve) => (release = resolve));
      async function* events() {
        yield first;
        await released;
        yield last;
      }
      return { headers: { 'content-type': 'text/event-stream' }, stream: Readable.from(events()) };
    },
    layer,
  );
  return { route, handler, release: () => release() };
}
