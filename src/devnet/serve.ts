import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, ConfigError } from '../config.js';
import type { AppContext } from '../context.js';
import { devnetFacilitator } from './facilitator.js';
import { facilitatorHandler, jsonRpcHandler } from './http.js';

export interface DevnetServer {
  /** BASE_RPC_URL for the processes that use this devnet. */
  rpcUrl: string;
  /** FACILITATOR_URL for them. */
  facilitatorUrl: string;
  close(): Promise<void>;
}

/**
 * `repo402 devnet serve`: the devnet chain (journalled in this process's database) as a JSON-RPC
 * node at `/rpc` and the reference x402 facilitator at `/facilitator`, on HOST:PORT. Processes in
 * mainnet mode pointed at them (BASE_RPC_URL, FACILITATOR_URL) pay and reconcile exactly as they
 * would against Base; several can share one chain, which an in-process devnet cannot.
 */
export async function startDevnetServer(ctx: AppContext, config: Config): Promise<DevnetServer> {
  if (config.payments.mode !== 'devnet' || config.payments.facilitatorUrl) {
    throw new ConfigError([
      'PAYMENTS_MODE: devnet serve runs the devnet (PAYMENTS_MODE=devnet, no FACILITATOR_URL)',
    ]);
  }
  const chain = (await ctx.rail()).devnet!;
  const rpc = jsonRpcHandler((method, params) => chain.request({ method, params } as never));
  const facilitator = facilitatorHandler(devnetFacilitator(chain));
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://devnet').pathname;
    if (path === '/rpc' && request.method === 'POST') return rpc(request, response);
    if (
      path.startsWith('/facilitator/') &&
      facilitator(`${request.method} ${path.slice(12)}`, request, response)
    )
      return;
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: 'not found: the devnet serves POST /rpc and /facilitator/{verify,settle,supported}',
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  ctx.log.info(
    {
      rpc: `${base}/rpc`,
      facilitator: `${base}/facilitator`,
      chainId: chain.network.chainId,
      usdc: chain.asset,
      facilitatorAccount: chain.platform.address,
      replayed: chain.replayed,
    },
    `repo402 devnet is up: JSON-RPC on ${base}/rpc, x402 facilitator on ${base}/facilitator`,
  );
  return {
    rpcUrl: `${base}/rpc`,
    facilitatorUrl: `${base}/facilitator`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
