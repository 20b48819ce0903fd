import type { HTTPFacilitatorClient } from '@x402/core/http';
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
