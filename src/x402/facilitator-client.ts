import type { FacilitatorClient, HTTPFacilitatorClient } from '@x402/core/http';
import type { Counter } from 'prom-client';
import type { PaymentsConfig } from '../config.js';

/**
 * The HTTP facilitator at `FACILITATOR_URL`. With CDP credentials every request carries a fresh
 * Coinbase Developer Platform JWT, made by Coinbase's own library for that request's method, host
 * and path (its `uris` claim), valid two minutes: Coinbase's facilitator refuses `verify`,
 * `settle` and `supported` without one. The secret never leaves this function's closure.
 */
export async function httpFacilitator(config: PaymentsConfig): Promise<HTTPFacilitatorClient> {
  const { HTTPFacilitatorClient } = await import('@x402/core/http');
  const url = config.facilitatorUrl!.replace(/\/+$/, '');
  const key = config.facilitatorCdpKey;
  if (!key) return new HTTPFacilitatorClient({ url });
  const { generateJwt } = await import('@coinbase/cdp-sdk/auth');
  const { host, pathname } = new URL(url);
  const bearer = async (requestMethod: 'GET' | 'POST', path: string) => ({
    Authorization: `Bearer ${await generateJwt({
      apiKeyId: key.id,
      apiKeySecret: key.secret,
      requestMethod,
      requestHost: host,
      requestPath: `${pathname.replace(/\/$/, '')}/${path}`,
    })}`,
  });
  return new HTTPFacilitatorClient({
    url,
    createAuthHeaders: async () => {
      const [verify, settle, supported] = await Promise.all([
        bearer('POST', 'verify'),
        bearer('POST', 'settle'),
        bearer('GET', 'supported'),
      ]);
      return { verify, settle, supported };
    },
  });
}

/**
 * `facilitator`, counting each request that fails (no answer, or an error status) by operation.
 * A refusal the facilitator answers (`isValid: false`, `success: false`) is its decision, not a fault.
 */
export function countingFailures(
  facilitator: FacilitatorClient,
  failures: Counter<'operation'>,
): FacilitatorClient {
  const counted = <T>(operation: string, request: () => Promise<T>): Promise<T> =>
    request().catch((error: unknown) => {
      failures.inc({ operation });
      throw error;
    });
  return {
    verify: (payload, requirements) => counted('verify', () => facilitator.verify(payload, requirements)),
    settle: (payload, requirements) => counted('settle', () => facilitator.settle(payload, requirements)),
    getSupported: () => counted('supported', () => facilitator.getSupported()),
  };
}
