import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { Webhook } from 'standardwebhooks';
import type { HostLookup } from './addresses.js';

/** What one attempt came to: a status (any; only 2xx is success) or an error before one arrived. */
export type AttemptResult = { ok: boolean; status: number | null; error: string | null };

export interface SignedRequest {
  url: string;
  /** The Standard Webhooks `webhook-id`: the same on every retry of one message. */
  messageId: string;
  /** The send time: receivers compare it with their own clock (five minutes' tolerance, usually). */
  timestamp: Date;
  body: string;
  secret: string;
}

/** What a receiver's answer may be before it is cut off: only its status matters. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs one signed message. Headers per the Standard Webhooks specification, signed by the
 * `standardwebhooks` package. The connection goes through `request-filtering-agent`, which checks
 * the address the host resolves to at connect time, on every attempt; a redirect is not followed
 * (it counts as a failure), so a public URL cannot bounce the request inward either.
 */
export function sendSigned(
  request: SignedRequest,
  options: { timeoutMs: number; allowPrivate: boolean; lookup: HostLookup },
): Promise<AttemptResult> {
  const url = new URL(request.url);
  const signature = new Webhook(request.secret).sign(request.messageId, request.timestamp, request.body);
  const filter = { allowPrivateIPAddress: options.allowPrivate, keepAlive: false };
  const secure = url.protocol === 'https:';
  const agent = secure ? new RequestFilteringHttpsAgent(filter) : new RequestFilteringHttpAgent(filter);
  return new Promise((resolve) => {
    const done = (result: AttemptResult) => {
      agent.destroy();
      resolve(result);
    };
    const outgoing = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        agent,
        lookup: options.lookup,
        timeout: options.timeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(request.body),
          'user-agent': 'repo402-webhooks',
          'webhook-id': request.messageId,
          'webhook-timestamp': String(Math.floor(request.timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const status = response.statusCode ?? null;
        const ok = status !== null && status >= 200 && status < 300;
        const finish = () => done({ ok, status, error: ok ? null : `the receiver answered HTTP ${status}` });
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', finish);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    outgoing.on('error', (error) => done({ ok: false, status: null, error: describe(error) }));
    outgoing.end(request.body);
  });
}

function describe(error: Error): string {
  if (/is not allowed\. Because/.test(error.message)) {
    return 'refused: the host resolves to a loopback, private, link-local or reserved address';
  }
  return error.message.slice(0, 300);
}
