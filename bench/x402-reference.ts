import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FacilitatorClient } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import type { Address } from 'viem';

/**
 * The yardstick of the buy-path benches: `@x402/express`'s own middleware selling a JSON route for
 * $2, and a facilitator that accepts every payment at once (no chain work in verify or settle).
 */

const payerOf = (payload: PaymentPayload) =>
  (payload.payload as { authorization: { from: string } }).authorization.from;

export const instantFacilitator: FacilitatorClient = {
  verify: async (payload: PaymentPayload) => ({ isValid: true, payer: payerOf(payload) }),
  settle: async (payload: PaymentPayload) => ({
    success: true,
    transaction: `0x${randomBytes(32).toString('hex')}`,
    network: 'eip155:8453',
    payer: payerOf(payload),
  }),
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
    extensions: [],
    signers: {},
  }),
};

export interface ReferenceServer {
  /** The paid route: `GET` it for the 402, again with `PAYMENT-SIGNATURE` for `{ ok: true }`. */
  url: string;
  close(): void;
}

/** The reference middleware on 127.0.0.1, paying `payTo`, settled by `facilitator`. */
export async function startReferenceServer(
  payTo: Address,
  facilitator: FacilitatorClient = instantFacilitator,
): Promise<ReferenceServer> {
  const app = express();
  const resourceServer = new x402ResourceServer(facilitator).register(
    'eip155:8453',
    new ExactEvmServerScheme(),
  );
  app.use(
    paymentMiddleware(
      {
        'GET /r': {
          accepts: { scheme: 'exact', price: '$2', network: 'eip155:8453', payTo },
          description: 'bench',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.get('/r', (_req, res) => {
    res.json({ ok: true });
  });
  const listener = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listener.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/r`,
    close: () => listener.close(),
  };
}
