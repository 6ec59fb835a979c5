import type { IncomingMessage } from 'node:http';

// What keeps web pages the developer visits away from `npm start` (docs/DECISIONS.md, "DNS
// rebinding and cross-site requests against the local gateway"). A page cannot read a loopback
// server's answers, unless it rebinds its own name to 127.0.0.1: its requests then carry its own
// name as Host, so only this machine's names (and those configured for the run) are served, at
// the gateway's own port. A page of another site can still send requests (a form post, a no-cors
// fetch) without reading them: state-changing ones whose browser says they come from another site
// are refused, and the local sign-in endpoint answers only pages of its own origin (or no browser
// at all: curl, `npm run token`).

/** The names a browser can reach this machine by without DNS, the only ones served by default. */
export const LOOPBACK_HOST_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** A request refused before any page or function sees it, with the status to answer. */
export interface Refusal {
  status: 403 | 421;
  message: string;
}

interface GuardOptions {
  /** Names served besides the loopback ones (lower case; IPv6 literals in brackets). */
  extraHostNames: readonly string[];
  /** The gateway's port (known once it listens). */
  port: () => number;
  /** Paths only a page of the gateway's own origin (or no browser) may use: the local sign-in. */
  sameOriginPaths: readonly string[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A host name or address as a Host header spells it (IPv6 in brackets), without a port. */
export const HOST_NAME = /^(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/i;

/** `name[:port]` of a Host header, the name lower-cased (IPv6 kept in brackets); undefined when malformed. */
export function parseHost(host: string): { name: string; port: number } | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(host.trim());
  if (!m) return undefined;
  return { name: m[1]!.toLowerCase(), port: m[2] === undefined ? 80 : Number(m[2]) };
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export function requestGuard(options: GuardOptions) {
  const names = new Set<string>([...LOOPBACK_HOST_NAMES, ...options.extraHostNames]);

  /** The origin a request was addressed to (`http://` + its Host), when that Host is one of ours. */
  function ownOrigin(req: IncomingMessage): string | undefined {
    const host = req.headers.host;
    const parsed = host === undefined ? undefined : parseHost(host);
    if (!parsed || !names.has(parsed.name) || parsed.port !== options.port()) return undefined;
    return `http://${host!.trim().toLowerCase()}`;
  }

  /** Whether an Origin header names a page served from one of our names (any port: a dev server beside this one). */
  function isOurPage(origin: string): boolean {
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && names.has(url.hostname);
    } catch {
      return false; // `null` (sandboxed frames, file: pages) and anything else unparseable
    }
  }

  /** Why the request must not be served, or undefined when it may be. */
  function refusal(req: IncomingMessage, pathname: string): Refusal | undefined {
    const own = ownOrigin(req);
    if (!own) {
      return {
        status: 421,
        // The Host it was sent is not echoed: nothing a rebound page sends comes back to it.
        message: `This local server answers only to ${[...names].join(', ')} on port ${options.port()}`,
      };
    }
    const origin = single(req.headers.origin);
    const fetchSite = single(req.headers['sec-fetch-site'])?.toLowerCase();
    if (options.sameOriginPaths.includes(pathname)) {
      // No CORS here either: a page elsewhere can neither read a token nor have one minted.
      if (
        (origin !== undefined && origin.toLowerCase() !== own) ||
        (fetchSite && !['same-origin', 'none'].includes(fetchSite))
      )
        return {
          status: 403,
          message: 'The local sign-in answers only pages of this server (or requests without a browser)',
        };
      return undefined;
    }
    if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
    if (fetchSite === 'cross-site' || (origin !== undefined && !isOurPage(origin)))
      return { status: 403, message: 'Cross-site requests that change data are refused by the local server' };
    return undefined;
  }

  return { ownOrigin, refusal };
}
