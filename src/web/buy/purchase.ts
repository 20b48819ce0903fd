import { encodeFunctionData, erc20Abi, hexToBigInt } from 'viem';
import { type ApiError, answerError, callApi } from '../api.js';
import type { Address } from '../wallet.js';
import type { WalletOption } from './wallets.js';

/**
 * The x402 purchase as the page makes it: read the 402, have the wallet sign the EIP-3009
 * `TransferWithAuthorization` it asks for (`eth_signTypedData_v4`), send it back with the quote,
 * and wait through settlement. The official x402 client does the same in 300 KB; this page needs
 * only the `exact` scheme on one chain (docs/DECISIONS.md, D-125).
 */

export interface Release {
  version: string;
  changelog: string;
  scan: string;
}

/** The parts of a 402 body the page reads; the rest is sent back as it came. */
export interface PaymentRequired {
  x402Version: number;
  resource: unknown;
  accepts: Array<{
    scheme: string;
    network: string;
    asset: Address;
    payTo: Address;
    amount: string;
    maxTimeoutSeconds: number;
    extra: { name: string; version: string };
  }>;
  extensions?: Record<string, unknown>;
  extra: {
    kind: 'new' | 'update';
    version: string;
    from?: string;
    to?: string;
    releases?: Release[];
    quote_id: string;
    valid_before: string;
    update_price_micro: string;
  };
}

export interface Grant {
  download_url: string;
  version: string;
  artifact_sha256: string;
  size_bytes: number;
  kind: 'new' | 'update' | 'free' | 'owned';
  attestation_url: string;
  transaction?: string;
}

/** What the service says this wallet may do with a listing now. */
export type Standing =
  | { kind: 'grant'; grant: Grant }
  | { kind: 'offer'; offer: PaymentRequired }
  | { kind: 'refused'; error: ApiError };

const resourcePath = (owner: string, slug: string) =>
  `/r/${encodeURIComponent(owner)}/${encodeURIComponent(slug)}`;

/**
 * Asks for the listing with the wallet's session: a holder (or a free listing) is granted the
 * download at once; anyone else gets the offer for them, `new` or `update`.
 */
export async function standing(owner: string, slug: string, session: string): Promise<Standing> {
  const answer = await callApi('GET', resourcePath(owner, slug), {
    headers: { 'x-wallet-signature': session },
  });
  return standingOf(answer);
}

function standingOf(answer: Awaited<ReturnType<typeof callApi>>): Standing {
  if (answer.status === 200) return { kind: 'grant', grant: answer.body as Grant };
  const body = answer.body as Partial<PaymentRequired> & { code?: string };
  if (answer.status === 402 && !body?.code && body?.accepts?.length) {
    return { kind: 'offer', offer: body as PaymentRequired };
  }
  return { kind: 'refused', error: answerError(answer) };
}

/** A re-download of a version the wallet owns. */
export async function ownedVersion(owner: string, slug: string, version: string, session: string) {
  const answer = await callApi('GET', `${resourcePath(owner, slug)}/v/${encodeURIComponent(version)}`, {
    headers: { 'x-wallet-signature': session },
  });
  if (answer.status !== 200) throw answerError(answer);
  return answer.body as Grant;
}

const AUTHORIZATION_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
};

function randomNonce(): `0x${string}` {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `0x${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

function base64Json(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A signed payment, as `PAYMENT-SIGNATURE` carries it, with the quote it pays. */
export interface SignedPayment {
  header: string;
  quoteId: string;
}

/**
 * Has the wallet sign the transfer the offer asks for. Its window is set by the service's clock,
 * not the browser's (a computer a few minutes fast would sign a window the service refuses): it
 * closes when the quote does and opens ten minutes before the quote began, as wide as the official
 * client's.
 */
export async function signPayment(
  wallet: WalletOption,
  payer: Address,
  offer: PaymentRequired,
): Promise<SignedPayment> {
  const accepted = offer.accepts[0]!;
  const validBefore = Math.floor(Date.parse(offer.extra.valid_before) / 1000);
  const authorization = {
    from: payer,
    to: accepted.payTo,
    value: accepted.amount,
    validAfter: String(validBefore - accepted.maxTimeoutSeconds - 600),
    validBefore: String(validBefore),
    nonce: randomNonce(),
  };
  const typedData = {
    types: AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    domain: {
      name: accepted.extra.name,
      version: accepted.extra.version,
      chainId: Number.parseInt(accepted.network.split(':')[1] ?? '', 10),
      verifyingContract: accepted.asset,
    },
    message: authorization,
  };
  const signature = (await wallet.provider.request({
    method: 'eth_signTypedData_v4',
    params: [payer, JSON.stringify(typedData)],
  })) as string;
  const payload = {
    x402Version: offer.x402Version,
    resource: offer.resource,
    accepted,
    payload: { signature, authorization },
    ...(offer.extensions ? { extensions: offer.extensions } : {}),
  };
  return { header: base64Json(payload), quoteId: offer.extra.quote_id };
}

/** The price moved between the offer and the payment: the fresh offer, to be asked again. */
export class PriceChanged extends Error {
  constructor(readonly offer: PaymentRequired) {
    super('The price changed');
  }
}

/** How the page hears of a payment still settling: the attempt, counting from 1. */
export type OnSettling = (attempt: number) => void;

const SETTLING = new Set(['settlement_pending', 'settlement_timeout']);
const WAIT_MS = 2_000;
/** About two minutes of waiting before the page hands the retry to the person. */
const ATTEMPTS = 60;

/**
 * Sends the payment, and again while the service says it is still settling: the same
 * authorization is never charged twice, so resending is safe. An authorization already used (an
 * earlier tab, a retry whose answer was lost) is the wallet's purchase: it is fetched as a holder.
 */
export async function pay(
  owner: string,
  slug: string,
  payment: SignedPayment,
  session: string,
  onSettling: OnSettling,
): Promise<Grant> {
  for (let attempt = 1; ; attempt++) {
    const answer = await callApi('GET', resourcePath(owner, slug), {
      headers: { 'payment-signature': payment.header, 'x-quote-id': payment.quoteId },
    });
    if (answer.status === 200) return answer.body as Grant;
    const error = answerError(answer);
    const details = error.body.details as { payment_required?: PaymentRequired } | undefined;
    if (error.body.code === 'price_changed' && details?.payment_required) {
      throw new PriceChanged(details.payment_required);
    }
    if (error.body.code === 'replay') {
      // Settled while the page waited: the purchase is the wallet's, and the refusal names its transaction.
      const purchase = (error.body.details as { purchase?: { transaction?: string | null } } | undefined)
        ?.purchase;
      const now = await standing(owner, slug, session);
      if (now.kind === 'grant')
        return { ...now.grant, transaction: purchase?.transaction ?? now.grant.transaction };
    }
    if (!SETTLING.has(error.body.code) || attempt >= ATTEMPTS) throw error;
    onSettling(attempt);
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  }
}

/** Starts the download of a granted zip, as a link the person clicked. */
export function startDownload(grant: Grant, name: string): void {
  const link = document.createElement('a');
  link.href = grant.download_url;
  link.download = `${name}-${grant.version}.zip`;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
}

/**
 * The USDC the wallet holds, in micro-USDC: read through the wallet's own connection to the chain,
 * or for the devnet's test wallet from the devnet.
 */
export async function usdcBalance(wallet: WalletOption, holder: Address, token?: Address): Promise<bigint> {
  if (wallet.test || !token) {
    const answer = await callApi('GET', `/devnet/balance/${holder}`);
    if (answer.status !== 200) throw answerError(answer);
    return BigInt((answer.body as { balance_micro: string }).balance_micro);
  }
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
  const result = (await wallet.provider.request({
    method: 'eth_call',
    params: [{ to: token, data }, 'latest'],
  })) as string;
  return hexToBigInt(result as `0x${string}`);
}
