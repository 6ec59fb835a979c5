import net from 'node:net';

// A tripwire for tests that hand the service hostile URLs: while installed, any TCP connection
// this process tries to open to a host that is not loopback is refused before a packet leaves
// (the connect call throws), and recorded. So a test can assert "refused without connecting"
// from the record, and a broken SSRF guard fails the test instead of reaching the network.
// (The service runs in the test's process, so its sockets go through the same prototype.)

export interface Tripwire {
  /** host:port of every refused attempt. */
  attempts: string[];
  /** Extra hosts to refuse although they are loopback (to test the tripwire itself). */
  deny: Set<string>;
  uninstall(): void;
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|::1|::ffff:127(?:\.\d{1,3}){3})$/i;

export function installTripwire(): Tripwire {
  const original = net.Socket.prototype.connect;
  const attempts: string[] = [];
  const deny = new Set<string>();
  net.Socket.prototype.connect = function connect(this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    let host: string | undefined;
    let port: unknown;
    if (Array.isArray(first)) {
      // The internal form: [options, callback].
      ({ host, port } = (first[0] ?? {}) as { host?: string; port?: unknown });
    } else if (first && typeof first === 'object') {
      if ((first as { path?: string }).path) return original.apply(this, args as never); // a Unix socket
      ({ host, port } = first as { host?: string; port?: unknown });
    } else {
      port = first;
      host = typeof args[1] === 'string' ? args[1] : undefined;
    }
    const target = (host ?? 'localhost').replace(/^\[|\]$/g, '');
    if (!LOOPBACK.test(target) || deny.has(target)) {
      attempts.push(`${target}:${String(port)}`);
      throw new Error(
        `tripwire: the test refused a connection to ${target}:${String(port)} (only loopback is allowed)`,
      );
    }
    return original.apply(this, args as never);
  } as typeof original;
  return {
    attempts,
    deny,
    uninstall() {
      net.Socket.prototype.connect = original;
    },
  };
}
