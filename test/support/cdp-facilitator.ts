import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FacilitatorClient } from '@x402/core/http';
import { importJWK, type JWK, jwtVerify } from 'jose';

/** The route Coinbase's facilitator answers under (`https://api.cdp.coinbase.com/platform/v2/x402`). */
export const CDP_FACILITATOR_PATH = '/platform/v2/x402';

/** A CDP API key as Coinbase issues an Ed25519 one: its id, and the secret as base64 of seed and public key. */
export interface CdpKey {
  id: string;
  secret: string;
  publicJwk: JWK;
}

export function newCdpKey(id = `organizations/test/apiKeys/${Math.random().toString(36).slice(2)}`): CdpKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' }) as { d: string; x: string };
  const secret = Buffer.concat([Buffer.from(jwk.d, 'base64url'), Buffer.from(jwk.x, 'base64url')]).toString(
    'base64',
  );
  return { id, secret, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x } };
}

export interface CdpFacilitator {
  url: string;
  /** Requests whose token was accepted, as `METHOD path`. */
  accepted: string[];
  /** Why each refused request was refused. */
  refused: string[];
  close(): Promise<void>;
}

/**
 * A stand-in for Coinbase's facilitator: the x402 facilitator API under `/platform/v2/x402`, in
 * front of a working facilitator, that answers only requests carrying a CDP JWT as Coinbase
 * documents it (Authentication > JWT): `Authorization: Bearer`, signed (EdDSA here) by the key
 * whose id is its `kid` and `sub`, `iss` "cdp", within `nbf`..`exp`, and a `uris` claim naming this
 * request's method, host and path. Anything else is `401` with CDP's error body.
 */
export async function startCdpFacilitator(inner: FacilitatorClient, key: CdpKey): Promise<CdpFacilitator> {
  const publicKey = await importJWK(key.publicJwk, 'EdDSA');
  const state = { accepted: [] as string[], refused: [] as string[] };
  const server: Server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const path = (request.url ?? '').split('?')[0]!;
    const uri = `${request.method} ${request.headers.host}${path}`;
    try {
      await authenticate(request, uri);
    } catch (error) {
      state.refused.push(`${uri}: ${(error as Error).message}`);
      return send(401, { errorType: 'unauthorized', errorMessage: 'Unauthorized.' });
    }
    state.accepted.push(`${request.method} ${path}`);
    try {
      if (request.method === 'GET' && path === `${CDP_FACILITATOR_PATH}/supported`) {
        return send(200, await inner.getSupported());
      }
      const body = await readJson(request);
      if (request.method === 'POST' && path === `${CDP_FACILITATOR_PATH}/verify`) {
        return send(200, await inner.verify(body.paymentPayload, body.paymentRequirements));
      }
      if (request.method === 'POST' && path === `${CDP_FACILITATOR_PATH}/settle`) {
        return send(200, await inner.settle(body.paymentPayload, body.paymentRequirements));
      }
      send(404, { errorType: 'not_found', errorMessage: 'Not found.' });
    } catch (error) {
      send(500, { errorType: 'internal_server_error', errorMessage: (error as Error).message });
    }
  });

  async function authenticate(request: IncomingMessage, uri: string): Promise<void> {
    const header = request.headers.authorization ?? '';
    if (!header.startsWith('Bearer ')) throw new Error('no bearer token');
    const { payload, protectedHeader } = await jwtVerify(header.slice('Bearer '.length), publicKey, {
      issuer: 'cdp',
      subject: key.id,
      algorithms: ['EdDSA'],
      requiredClaims: ['exp', 'nbf', 'uris'],
    });
    if (protectedHeader.kid !== key.id) throw new Error(`kid ${protectedHeader.kid}`);
    const uris = payload.uris as unknown;
    if (!Array.isArray(uris) || !uris.includes(uri))
      throw new Error(`uris ${JSON.stringify(uris)} do not name ${uri}`);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}${CDP_FACILITATOR_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

async function readJson(
  request: IncomingMessage,
): Promise<{ paymentPayload: never; paymentRequirements: never }> {
  let raw = '';
  for await (const chunk of request) raw += chunk;
  return JSON.parse(raw);
}
