import { createHmac, randomBytes, randomUUID } from 'node:crypto';

export interface DeliveryOptions {
  /** Reuse a delivery id to replay a delivery, as GitHub's "Redeliver" does. */
  deliveryId?: string;
  /** `wrong`: a well-formed signature that does not match the body; `missing`: no signature headers. */
  signature?: 'valid' | 'wrong' | 'missing';
  /** Sign with this secret instead of the App's: a forged delivery. */
  secret?: string;
  /** Leave these of GitHub's headers out (a malformed delivery), e.g. `x-github-event`. */
  omitHeaders?: string[];
}

export interface Delivery {
  status: number;
  body: string;
  deliveryId: string;
  /** What was sent, so a test can redeliver it. */
  event: string;
  payload: unknown;
}

export interface Hook {
  secret: string;
  appId: number;
  hookId: number;
  /** GitHub-Hookshot/<this>: one per stand-in, as one per GitHub deployment. */
  hookshot: string;
}

export function newHook(secret: string, appId: number): Hook {
  return { secret, appId, hookId: 500_000_000 + appId, hookshot: randomBytes(4).toString('hex').slice(0, 7) };
}

/** GitHub gives up on a delivery after 10 seconds. */
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * POSTs one webhook delivery as GitHub's hookshot does. The signature is an HMAC-SHA256 over the
 * exact bytes sent, computed here with node:crypto rather than @octokit/webhooks-methods so the
 * receiver's verification (which uses @octokit/webhooks) is checked against an independent signer.
 * A string payload is sent as it is (a malformed body); anything else as JSON.
 */
export async function deliver(
  hook: Hook,
  url: string,
  event: string,
  payload: unknown,
  options: DeliveryOptions = {},
): Promise<Delivery> {
  const deliveryId = options.deliveryId ?? randomUUID();
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const secret = options.secret ?? hook.secret;
  const signed = options.signature === 'wrong' ? `${body} ` : body;
  const signatures: Record<string, string> =
    options.signature === 'missing'
      ? {}
      : {
          // GitHub still sends the SHA-1 header beside the SHA-256 one.
          'x-hub-signature': `sha1=${createHmac('sha1', secret).update(signed).digest('hex')}`,
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(signed).digest('hex')}`,
        };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `GitHub-Hookshot/${hook.hookshot}`,
    'x-github-event': event,
    'x-github-delivery': deliveryId,
    'x-github-hook-id': String(hook.hookId),
    'x-github-hook-installation-target-type': 'integration',
    'x-github-hook-installation-target-id': String(hook.appId),
    ...signatures,
  };
  for (const name of options.omitHeaders ?? []) delete headers[name];
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    headers,
    body,
  });
  return { status: response.status, body: await response.text(), deliveryId, event, payload };
}
