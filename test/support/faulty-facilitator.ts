import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FacilitatorClient } from '@x402/core/http';
import type { VerifyResponse } from '@x402/core/types';

/**
 * A real HTTP x402 facilitator (POST /verify, POST /settle, GET /supported) in front of a working
 * one, that misbehaves on settle as told: `ok`; `fail` (500, nothing broadcast); `delay` (answers
 * after `delayMs`, for a settle that succeeds late); `lost` (settles on chain, then drops the
 * connection, after `delayMs` when set); `pending` (settles on chain, answers `settlement_pending`); `refuse` (answers a
 * definitive insufficient-balance refusal without broadcasting). `verifyAnswer`, when set, replaces
 * the working facilitator's verify answer: a lax or lying facilitator.
 */
export type SettleMode = 'ok' | 'fail' | 'delay' | 'lost' | 'pending' | 'refuse' | 'no-hash';

export interface FaultyFacilitator {
  url: string;
  mode: SettleMode;
  /**
   * Picks each settle's mode (and delay) by its number, 1-based, instead of `mode` and `delayMs`:
   * faults for some settles only.
   */
  plan?: (settle: number) => { mode: SettleMode; delayMs?: number };
  delayMs: number;
  verifyAnswer?: VerifyResponse;
  settles: number;
  /** Settles that completed on the inner facilitator. */
  settled: number;
  close(): Promise<void>;
}

async function readJson(
  request: IncomingMessage,
): Promise<{ paymentPayload: never; paymentRequirements: never }> {
  let raw = '';
  for await (const chunk of request) raw += chunk;
  return JSON.parse(raw);
}

export async function startFaultyFacilitator(inner: FacilitatorClient): Promise<FaultyFacilitator> {
  const state: Pick<FaultyFacilitator, 'mode' | 'plan' | 'delayMs' | 'verifyAnswer' | 'settles' | 'settled'> =
    {
      mode: 'ok',
      delayMs: 0,
      settles: 0,
      settled: 0,
    };
  const server: Server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    try {
      if (request.method === 'GET' && request.url === '/supported')
        return send(200, await inner.getSupported());
      const body = await readJson(request);
      if (request.url === '/verify') {
        return send(
          200,
          state.verifyAnswer ?? (await inner.verify(body.paymentPayload, body.paymentRequirements)),
        );
      }
      if (request.url !== '/settle') return send(404, { error: 'not found' });
      state.settles += 1;
      const planned = state.plan?.(state.settles);
      const mode = planned?.mode ?? state.mode;
      const delayMs = planned?.delayMs ?? state.delayMs;
      if (mode === 'fail') return send(500, { error: 'facilitator unavailable' });
      if (mode === 'refuse') {
        return send(200, {
          success: false,
          errorReason: 'invalid_exact_evm_insufficient_balance',
          transaction: '',
          network: (body.paymentRequirements as { network: string }).network,
        });
      }
      const result = await inner.settle(body.paymentPayload, body.paymentRequirements);
      if (result.success) state.settled += 1;
      if (mode === 'lost') {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        return request.socket.destroy();
      }
      if (mode === 'pending')
        return send(200, { ...result, success: false, errorReason: 'settlement_pending' });
      // A success that names no transaction hash: never stored as one.
      if (mode === 'no-hash') return send(200, { ...result, transaction: 'unknown' });
      if (mode === 'delay') await new Promise((resolve) => setTimeout(resolve, delayMs));
      send(200, result);
    } catch (error) {
      send(500, { error: (error as Error).message });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
