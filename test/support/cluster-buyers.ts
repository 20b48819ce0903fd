import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';

/**
 * Buyers as agents behave with a flaky service between them and the chain, paying with the
 * official x402 client (`@x402/fetch`, and its payloads). A careful buyer sends the payment the
 * client signed again while the answer is not final (a pending settlement, a timeout, a 5xx, a
 * dropped connection), signing a new one only when told the old one can no longer be used. A
 * careless one signs two or three payments for the same purchase and sends them all at once.
 */

export interface PurchaseOutcome {
  ok: boolean;
  /** The version bought (or found owned). */
  version?: string;
  /** Requests with a payment, all copies and retries. */
  paymentRequests: number;
  /** New payments signed after the first because an earlier one could no longer be used, and why. */
  resigned: number;
  resignedFor: string[];
  /** The zip fetched from the grant's URL. */
  downloaded: boolean;
  /** From the first request to the grant. */
  latencyMs: number;
  /** How the last request ended, when not ok. */
  failure?: string;
  /** Each paying request's answer (`status code`), in order: what a buyer went through. */
  trail: string[];
}

interface Grant {
  download_url?: string;
  version?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function request(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // a proxy's or a dying process's answer
    }
    return { status: res.status, body };
  } catch (error) {
    return { status: 0, body: { code: (error as Error).name } };
  }
}

/** Answers that mean "the same payment may still go through": send it again. */
function retrySame(answer: Answer): boolean {
  return (
    answer.status === 0 ||
    answer.status >= 500 ||
    answer.status === 429 ||
    (answer.status === 402 && answer.body.code === 'settlement_pending')
  );
}

function signer(account: PrivateKeyAccount) {
  return new x402Client().register('eip155:*', new ExactEvmScheme(account)).setSpendControls(false);
}

async function quote(resource: string, deadline: number): Promise<PaymentRequired | undefined> {
  while (Date.now() < deadline) {
    const answer = await request(resource);
    if (answer.status === 402 && Array.isArray(answer.body.accepts))
      return answer.body as unknown as PaymentRequired;
    await sleep(1000);
  }
  return undefined;
}

async function download(url: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      const bytes = await res.arrayBuffer();
      if (res.ok && bytes.byteLength > 0) return true;
    } catch {
      // the store restarting
    }
    await sleep(1000);
  }
  return false;
}

/**
 * Buys `resource` (`/api/r/{owner}/{slug}` on the tier's URL), then downloads the zip. A careful
 * buyer (`copies` 1) pays with `@x402/fetch` as is; when that does not end in a grant it sends the
 * very payment the official client signed again until the answer is final. A careless one signs
 * `copies` payments for the same quote and sends them all at once. Gives up after `patienceMs`.
 */
export async function purchase(
  resource: string,
  account: PrivateKeyAccount,
  { copies = 1, patienceMs = 360_000 }: { copies?: number; patienceMs?: number } = {},
): Promise<PurchaseOutcome> {
  const started = Date.now();
  const deadline = started + patienceMs;
  const client = signer(account);
  const outcome: PurchaseOutcome = {
    ok: false,
    paymentRequests: 0,
    resigned: 0,
    resignedFor: [],
    downloaded: false,
    latencyMs: 0,
    trail: [],
  };
  let grant: Grant | undefined;

  /** The official client's purchase; the payment it sent, when it did not end in a grant. */
  const officialClient = async (): Promise<string | undefined> => {
    let sent: string | undefined;
    const recording: typeof fetch = (input, init) => {
      sent = new Request(input, init).headers.get('payment-signature') ?? sent;
      return fetch(input, init);
    };
    try {
      const res = await wrapFetchWithPayment(recording, client)(resource, {
        signal: AbortSignal.timeout(30_000),
      });
      if (sent) {
        outcome.paymentRequests += 1;
        outcome.trail.push(`official ${res.status}`);
      }
      if (res.status === 200) grant = (await res.json()) as Grant;
      else await res.arrayBuffer();
    } catch (error) {
      // A dropped connection, a proxy's 502 body: the payment, if one was sent, is retried below.
      outcome.trail.push(`official ${(error as Error).name}`);
    }
    return grant ? undefined : sent;
  };

  /** Sends `header` until a final answer; a careful buyer signs anew when the payment is spent. */
  const pay = async (header: string, quoteId: string | undefined, careful: boolean): Promise<void> => {
    while (!grant && Date.now() < deadline) {
      outcome.paymentRequests += 1;
      const answer = await request(resource, {
        'payment-signature': header,
        ...(quoteId ? { 'x-quote-id': quoteId } : {}),
      });
      const reason = (answer.body.details as { reason?: string } | undefined)?.reason;
      outcome.trail.push(
        `${answer.status} ${String(answer.body.code ?? '')}${reason ? ` (${reason})` : ''}`.trim(),
      );
      if (answer.status === 200) {
        grant = answer.body as Grant;
        return;
      }
      if (answer.status === 409 && answer.body.code === 'replay') {
        // Settled meanwhile (another copy, or our own earlier try): owned, and a re-fetch gives the grant.
        const details = answer.body.details as { purchase?: { version?: string } } | undefined;
        grant = { version: details?.purchase?.version };
        return;
      }
      if (retrySame(answer)) {
        await sleep(answer.status === 429 ? 2000 : 1500);
        continue;
      }
      // This payment can no longer be used (expired, quote changed): a careful buyer signs anew.
      outcome.failure = `${answer.status} ${String(answer.body.code ?? '')}`.trim();
      if (!careful) return;
      const fresh = await quote(resource, deadline);
      if (!fresh) return;
      header = await signed(fresh);
      quoteId = quoteIdOf(fresh);
      outcome.resigned += 1;
      outcome.resignedFor.push(outcome.failure);
    }
  };
  const signed = async (required: PaymentRequired) =>
    encodePaymentSignatureHeader(await client.createPaymentPayload(required));

  if (copies === 1) {
    const sent = await officialClient();
    if (!grant) {
      const required = sent ? undefined : await quote(resource, deadline);
      if (sent) await pay(sent, undefined, true);
      else if (required) await pay(await signed(required), quoteIdOf(required), true);
      else outcome.failure = 'no 402 to pay';
    }
  } else {
    const required = await quote(resource, deadline);
    if (required) {
      const headers = await Promise.all(Array.from({ length: copies }, () => signed(required)));
      await Promise.all(headers.map((header, i) => pay(header, quoteIdOf(required), i === 0)));
    } else outcome.failure = 'no 402 to pay';
  }
  if (grant) {
    outcome.ok = true;
    outcome.failure = undefined;
    outcome.version = grant.version;
    outcome.latencyMs = Date.now() - started;
    // A `409 replay` carries the purchase, not a grant: the holder re-fetches for the download.
    outcome.downloaded = grant.download_url
      ? await download(grant.download_url, deadline)
      : grant.version !== undefined && (await refetch(resource, grant.version, account));
  }
  return outcome;
}

function quoteIdOf(required: PaymentRequired): string | undefined {
  return (required.accepts[0]?.extra as { quote_id?: string } | undefined)?.quote_id;
}

/** A holder's free re-fetch of `version` of `resource` with a wallet signature, and the download. */
export async function refetch(
  resource: string,
  version: string,
  account: PrivateKeyAccount,
  patienceMs = 120_000,
): Promise<boolean> {
  const deadline = Date.now() + patienceMs;
  const { origin } = new URL(resource);
  while (Date.now() < deadline) {
    const challenge = await request(
      `${origin}/api/auth/challenge?address=${account.address}&purpose=wallet_ownership`,
    );
    if (challenge.status === 200) {
      const { nonce, message } = challenge.body as { nonce: string; message: string };
      const signature = await account.signMessage({ message });
      const answer = await request(`${resource}/v/${version}`, {
        'x-wallet-signature': encodeWalletSignature({ address: account.address, nonce, signature }),
      });
      if (answer.status === 200) return download(String(answer.body.download_url), deadline);
      if (!retrySame(answer)) return false;
    }
    await sleep(1000);
  }
  return false;
}
