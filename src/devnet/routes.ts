import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { BODY_LIMITS } from '../platform/http/json-body.js';
import { errorResponses } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { formatMicroUsdc, MicroUsdc } from '../platform/money/money.js';
import { BASE } from '../platform/networks.js';
import {
  FAUCET_GRANT_MICRO,
  FAUCET_GRANTS_PER_ADDRESS,
  FAUCET_GRANTS_PER_DAY,
  grantFromFaucet,
} from './faucet.js';
import { DEVNET_TOKEN_DOMAIN } from './token-domain.js';

/**
 * Devnet only (PAYMENTS_MODE=devnet): read-only routes that let an agent tell test money from real
 * money and check its balance and a transaction on the local chain, which nothing else serves.
 * Not registered on testnet or mainnet, where the chain's own explorers and RPC endpoints answer.
 */

export const DEVNET_NOTE =
  `This server runs repo402 devnet: a local chain in the server process that impersonates Base (chain id ${BASE.chainId}, network ${BASE.caip2}). ` +
  'Its USDC is a test token deployed at the Base USDC address; it has no value and exists only on this server. ' +
  `Its EIP-712 domain name is "${DEVNET_TOKEN_DOMAIN.name}", not real USDC's "USD Coin" (the 402 names it in extra.name), so a payment authorization signed here is worthless on Base even though the chain id and token address are Base's. ` +
  'Transactions here are not on Base: public explorers and RPC endpoints do not know them.';

const DevnetInfoSchema = z
  .object({
    devnet: z.literal(true),
    note: z.string(),
    network: z.string(),
    chain_id: z.number().int(),
    token: z.object({
      address: z.string(),
      decimals: z.number().int(),
      test_token: z.literal(true),
      eip712_domain: z.object({ name: z.string(), version: z.string() }).meta({
        description:
          "The token's EIP-712 domain: its name differs from real USDC's, so no authorization signed for this devnet is valid on Base",
      }),
    }),
    balance_url: z.string().meta({ description: 'GET with an address in place of {address}' }),
    transaction_url: z.string().meta({ description: 'GET with a transaction hash in place of {hash}' }),
    faucet_url: z
      .string()
      .meta({ description: 'POST {"address"} for test USDC, capped per address and per day' }),
  })
  .meta({ id: 'DevnetInfo' });

const BalanceSchema = z
  .object({ address: z.string(), balance_micro: MicroUsdc, test_token: z.literal(true) })
  .meta({ id: 'DevnetBalance' });

const TransactionSchema = z
  .object({
    hash: z.string(),
    status: z.enum(['success', 'reverted']),
    block_number: z.string(),
    from: z.string(),
    to: z.string().nullable(),
    devnet: z.literal(true),
  })
  .meta({ id: 'DevnetTransaction' });

const FaucetRequestSchema = z
  .strictObject({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed address') })
  .meta({ id: 'DevnetFaucetRequest' });

const FaucetGrantSchema = z
  .object({
    address: z.string(),
    amount_micro: MicroUsdc,
    transaction: z.string(),
    test_token: z.literal(true),
  })
  .meta({ id: 'DevnetFaucetGrant' });

export function devnetRoutes(ctx: AppContext) {
  return async (app: App): Promise<void> => {
    const limited = rateLimitConfig(ctx.config, 'public');
    const base = ctx.config.baseUrl;
    const chain = async () => {
      const devnet = (await ctx.rail()).devnet;
      if (!devnet) throw new AppError('not_found');
      return devnet;
    };
    app.get(
      '/devnet',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: 'Devnet only: this server takes test money (chain, token, where to check balances)',
          response: { 200: DevnetInfoSchema, ...errorResponses('not_found', 'rate_limited') },
        },
      },
      async () => {
        const devnet = await chain();
        return {
          devnet: true as const,
          note: DEVNET_NOTE,
          network: devnet.network.caip2,
          chain_id: devnet.network.chainId,
          token: {
            address: devnet.asset,
            decimals: 6,
            test_token: true as const,
            eip712_domain: { name: DEVNET_TOKEN_DOMAIN.name, version: DEVNET_TOKEN_DOMAIN.version },
          },
          balance_url: `${base}/api/devnet/balance/{address}`,
          transaction_url: `${base}/api/devnet/tx/{hash}`,
          faucet_url: `${base}/api/devnet/faucet`,
        };
      },
    );
    app.get(
      '/devnet/balance/:address',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: "Devnet only: an address's test-USDC balance in micro-USDC",
          params: z.object({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed address') }),
          response: { 200: BalanceSchema, ...errorResponses('invalid_request', 'not_found', 'rate_limited') },
        },
      },
      async (request, reply) => {
        const devnet = await chain();
        const address = request.params.address as `0x${string}`;
        reply.header('cache-control', 'no-store');
        return {
          address,
          balance_micro: formatMicroUsdc(await devnet.balanceOf(address)),
          test_token: true as const,
        };
      },
    );
    app.post(
      '/devnet/faucet',
      {
        config: rateLimitConfig(ctx.config, 'auth'),
        bodyLimit: BODY_LIMITS.small,
        schema: {
          tags: ['public'],
          summary: `Devnet only: ${formatMicroUsdc(FAUCET_GRANT_MICRO)} micro-USDC of test money to an address, at most ${FAUCET_GRANTS_PER_ADDRESS} times per address and ${FAUCET_GRANTS_PER_DAY} times per server in 24 hours`,
          body: FaucetRequestSchema,
          response: {
            201: FaucetGrantSchema,
            ...errorResponses('invalid_request', 'not_found', 'rate_limited'),
          },
        },
      },
      async (request, reply) => {
        const grant = await grantFromFaucet(ctx, request.body.address as `0x${string}`);
        reply.code(201).header('cache-control', 'no-store');
        return {
          address: grant.address,
          amount_micro: formatMicroUsdc(grant.amountMicro),
          transaction: grant.transaction,
          test_token: true as const,
        };
      },
    );
    app.get(
      '/devnet/tx/:hash',
      {
        config: limited,
        schema: {
          tags: ['public'],
          summary: 'Devnet only: a transaction receipt on the local chain (settlements, payouts, funding)',
          params: z.object({ hash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte hash') }),
          response: {
            200: TransactionSchema,
            ...errorResponses('invalid_request', 'not_found', 'rate_limited'),
          },
        },
      },
      async (request) => {
        const devnet = await chain();
        const receipt = await devnet.publicClient
          .getTransactionReceipt({ hash: request.params.hash as `0x${string}` })
          .catch(() => undefined);
        if (!receipt) throw new AppError('not_found', { message: 'No such transaction on this devnet' });
        return {
          hash: receipt.transactionHash,
          status: receipt.status,
          block_number: receipt.blockNumber.toString(),
          from: receipt.from,
          to: receipt.to ?? null,
          devnet: true as const,
        };
      },
    );
  };
}
