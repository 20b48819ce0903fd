/**
 * What the official buyer (`@x402/fetch`'s steps between the 402 and the paid request) spends on
 * repo402's 402 against the one `@x402/express` sends: read the body, decode `PAYMENT-REQUIRED`,
 * sign the EIP-3009 authorization, encode `PAYMENT-SIGNATURE`. No network: the two 402s are built
 * once (repo402's by the function its route sends, the reference's captured from the middleware)
 * and the client's steps are timed alone, alternated in rounds, by CPU per payment.
 * Usage: npx tsx bench/x402-client-cost.ts [--payments 1000] [--rounds 4]
 */
import { parseArgs } from 'node:util';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BASE } from '../src/platform/networks.js';
import type { Offer } from '../src/x402/offer.js';
import { paymentRequiredBody } from '../src/x402/payment-required.js';
import { signQuote } from '../src/x402/quotes.js';
import type { PaymentRail } from '../src/x402/rail.js';
import { USDC_DOMAIN } from '../test/support/chain.js';
import { startReferenceServer } from './x402-reference.js';

const { values } = parseArgs({
  options: { payments: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '4' } },
});
const payments = Number(values.payments);
const rounds = Number(values.rounds);

const payTo = privateKeyToAccount(generatePrivateKey()).address;
const baseUrl = 'http://127.0.0.1:8080';

/** A 402 as the wire carries it: the body text and the `PAYMENT-REQUIRED` header. */
interface Wire402 {
  body: string;
  header: string;
}

function repo402Wire(): Wire402 {
  const rail = { network: BASE, asset: BASE.usdc, payTo, tokenDomain: USDC_DOMAIN } as PaymentRail;
  const offer: Offer = {
    listingId: '00000000-0000-0000-0000-000000000000',
    owner: 'bench-seller',
    slug: 'bench-kit',
    version: '1.0.0',
    kind: 'new',
    priceMicro: 2_000_000n,
    amountMicro: 2_000_000n,
    updatePriceMicro: 500_000n,
  };
  const expiresAt = new Date(Date.now() + 300_000);
  const id = signQuote(Buffer.alloc(32, 7), { ...offer, expiresAt });
  const json = JSON.stringify(paymentRequiredBody(baseUrl, rail, offer, { id, expiresAt }, undefined));
  return { body: json, header: Buffer.from(json).toString('base64') };
}

/** The reference's 402, as `@x402/express` answers an unpaid request (the payments bench's configuration). */
async function referenceWire(): Promise<Wire402> {
  const reference = await startReferenceServer(payTo);
  try {
    const res = await fetch(reference.url);
    return { body: await res.text(), header: res.headers.get('payment-required') ?? '' };
  } finally {
    reference.close();
  }
}

const client = new x402Client()
  .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(generatePrivateKey())))
  .setSpendControls(false);
const http = new x402HTTPClient(client);

/** The official client's steps from a 402 to the paid request's header (wrapFetchWithPayment's order). */
async function pay(wire: Wire402): Promise<number> {
  const body = wire.body ? JSON.parse(wire.body) : undefined;
  const required = http.getPaymentRequiredResponse(
    (name) => (name.toLowerCase() === 'payment-required' ? wire.header : null),
    body,
  );
  const payload = await client.createPaymentPayload(required);
  return http.encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE']?.length ?? 0;
}

const wires = { repo402: repo402Wire(), reference: await referenceWire() };
const perPayment: Record<string, number[]> = { repo402: [], reference: [] };
let headerBytes: Record<string, number> = {};
for (let round = 0; round <= rounds; round += 1) {
  for (const [name, wire] of Object.entries(wires)) {
    const before = process.cpuUsage();
    let bytes = 0;
    for (let i = 0; i < payments; i += 1) bytes = await pay(wire);
    const cpu = process.cpuUsage(before);
    // Round 0 warms the JIT up and is not counted.
    if (round > 0) perPayment[name]!.push((cpu.user + cpu.system) / 1000 / payments);
    headerBytes = { ...headerBytes, [name]: bytes };
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`${payments} payments per round, ${rounds} rounds alternated (after one unmeasured)\n`);
console.log(
  '| 402 from | 402 JSON bytes | PAYMENT-SIGNATURE bytes | client CPU ms per payment (median) | rounds |',
);
console.log('| --- | --- | --- | --- | --- |');
for (const [name, wire] of Object.entries(wires)) {
  const runs = perPayment[name]!;
  console.log(
    `| ${name} | ${Buffer.from(wire.header, 'base64').length} | ${headerBytes[name]} | ${median(runs).toFixed(3)} | ${runs.map((ms) => ms.toFixed(3)).join(', ')} |`,
  );
}
process.exit(0);
