import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonRpcHandler } from '../../src/devnet/http.js';

export interface JsonRpcServer {
  url: string;
  /** JSON-RPC methods received, in order. */
  calls: string[];
  close(): Promise<void>;
}

/** A real JSON-RPC 2.0 endpoint over HTTP answering each call with `handle` (the devnet's own handler). */
export async function serveJsonRpc(
  handle: (method: string, params: unknown[]) => Promise<unknown>,
): Promise<JsonRpcServer> {
  const calls: string[] = [];
  const server: Server = createServer(
    jsonRpcHandler((method, params) => {
      calls.push(method);
      return handle(method, params);
    }),
  );
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
