import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

// A loopback identity provider for tests: serves a JWKS and signs ID tokens with its key (or,
// for attacks, with keys and algorithms it does not publish).

export interface JwksServer {
  url: string;
  issuer: string;
  audience: string;
  publicJwk: JWK;
  requests: number;
  sign(
    claims: JWTPayload,
    options?: {
      expiresIn?: number;
      notBefore?: number;
      issuer?: string;
      audience?: string;
      key?: CryptoKey;
      kid?: string;
    },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startJwksServer(): Promise<JwksServer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const state = { requests: 0 };
  const server = http.createServer((_req, res) => {
    state.requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = 'https://idp.test';
  const audience = 'test-app';
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    issuer,
    audience,
    publicJwk,
    get requests() {
      return state.requests;
    },
    async sign(claims, o = {}) {
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: o.kid ?? kid })
        .setIssuer(o.issuer ?? issuer)
        .setAudience(o.audience ?? audience)
        .setIssuedAt(now - 5)
        .setExpirationTime(now + (o.expiresIn ?? 3600));
      if (o.notBefore !== undefined) jwt.setNotBefore(now + o.notBefore);
      return jwt.sign(o.key ?? privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
