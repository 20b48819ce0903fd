import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsonRpcServer {
  url: string;
  /** JSON-RPC methods received, in order. */
  calls: string[];
  close(): Promise<void>;
}

interface Call {
  id: number | string | null;
  method: string;
  params?: unknown[];
}

/**
 * A real JSON-RPC 2.0 endpoint over HTTP (single calls and batches), answering each call with
 * `handle`. A thrown error becomes the JSON-RPC error, keeping its `code` and `data` when it has
 * them, as an Ethereum node reports reverts.
 */
export async function serveJsonRpc(
  handle: (method: string, params: unknown[]) => Promise<unknown>,
): Promise<JsonRpcServer> {
  const calls: string[] = [];
  const answer = async ({ id, method, params }: Call) => {
    calls.push(method);
    try {
      return { jsonrpc: '2.0', id, result: (await handle(method, params ?? [])) ?? null };
    } catch (error) {
      const { message, code, data } = error as { message: string; code?: unknown; data?: unknown };
      return { jsonrpc: '2.0', id, error: { code: typeof code === 'number' ? code : -32000, message, data } };
    }
  };
  const server: Server = createServer(async (request, response) => {
    let raw = '';
    for await (const chunk of request) raw += chunk;
    const body = JSON.parse(raw) as Call | Call[];
    const reply = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
