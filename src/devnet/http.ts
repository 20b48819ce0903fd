import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FacilitatorClient } from '@x402/core/http';

/**
 * The devnet as other processes reach Base: a JSON-RPC 2.0 endpoint (single calls and batches)
 * and an x402 facilitator (`POST /verify`, `POST /settle`, `GET /supported`, the paths
 * `HTTPFacilitatorClient` calls). Plain node:http handlers, so `repo402 devnet serve` and the
 * tests' stand-ins for Base serve the same bytes.
 */

/** Largest request body: a JSON-RPC batch or a payment payload, never more than a few kilobytes. */
const MAX_BODY_BYTES = 1024 * 1024;

export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

class BodyTooLarge extends Error {}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

interface Call {
  id?: number | string | null;
  method?: unknown;
  params?: unknown;
}

/**
 * Answers each call with `handle`. A thrown error becomes the JSON-RPC error, keeping its `code`
 * and `data` when it has them, as an Ethereum node reports reverts.
 */
export function jsonRpcHandler(handle: (method: string, params: unknown[]) => Promise<unknown>): Handler {
  const answer = async ({ id = null, method, params }: Call) => {
    if (typeof method !== 'string') {
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'invalid request' } };
    }
    try {
      const args = Array.isArray(params) ? params : [];
      return { jsonrpc: '2.0', id, result: (await handle(method, args)) ?? null };
    } catch (error) {
      const { message, code, data } = error as { message: string; code?: unknown; data?: unknown };
      return { jsonrpc: '2.0', id, error: { code: typeof code === 'number' ? code : -32000, message, data } };
    }
  };
  return (request, response) => {
    readJson(request).then(
      async (body) => {
        const calls = body as Call | Call[];
        sendJson(
          response,
          200,
          Array.isArray(calls) ? await Promise.all(calls.map(answer)) : await answer(calls),
        );
      },
      (error: unknown) =>
        sendJson(response, error instanceof BodyTooLarge ? 413 : 400, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: 'parse error' },
        }),
    );
  };
}

/**
 * An x402 facilitator over HTTP in front of `facilitator`. `route` is the method and the path
 * below the facilitator's base URL (`POST /settle`); false when it is none of the three.
 */
export function facilitatorHandler(
  facilitator: FacilitatorClient,
): (route: string, request: IncomingMessage, response: ServerResponse) => boolean {
  const paid =
    (call: (payload: never, requirements: never) => Promise<unknown>) => async (request: IncomingMessage) => {
      const body = (await readJson(request)) as { paymentPayload: never; paymentRequirements: never };
      return call(body.paymentPayload, body.paymentRequirements);
    };
  const routes: Record<string, (request: IncomingMessage) => Promise<unknown>> = {
    'GET /supported': () => facilitator.getSupported(),
    'POST /verify': paid((payload, requirements) => facilitator.verify(payload, requirements)),
    'POST /settle': paid((payload, requirements) => facilitator.settle(payload, requirements)),
  };
  return (route, request, response) => {
    const answer = Object.hasOwn(routes, route) ? routes[route] : undefined;
    if (!answer) return false;
    answer(request).then(
      (body) => sendJson(response, 200, body),
      (error: unknown) =>
        sendJson(response, error instanceof BodyTooLarge ? 413 : 500, { error: (error as Error).message }),
    );
    return true;
  };
}
