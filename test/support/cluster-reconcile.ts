import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { createPublicClient, http, parseAbiItem } from 'viem';
import { BASE } from '../../src/platform/networks.js';
import { CLUSTER_BUCKET, type Cluster } from './cluster.js';

/**
 * The end-of-run books of a cluster run (issue 19), read from the two witnesses that do not depend
 * on repo402 having been right: the chain (every `AuthorizationUsed` of the token and the transfer
 * it made) and the S3 store, against the tier's database.
 *
 * - lost: an authorization the chain settled to the platform without exactly one settled payment
 *   row, one purchase and its entitlement (money taken, nothing sold or nothing recorded);
 * - unpaid grants: an entitlement whose purchase rests on no payment the chain settled;
 * - double: a buyer charged on chain twice for one listing and version, or a payment row the
 *   service marked `duplicate` (settled beside another for the same version);
 * - the ledger: credits plus fees equal what the chain settled for purchases;
 * - releases: every cut either has its zip in the bucket or is recorded as failed or refused, and
 *   every release with a verdict has its signed attestation.
 */
export interface Reconciliation {
  settledOnChain: number;
  purchases: number;
  entitlements: number;
  lost: number;
  unpaidGrants: number;
  double: number;
  /** Settled on chain for purchases minus (ledger credits + fees), micro-USDC. */
  ledgerGapMicro: bigint;
  releases: number;
  zipsMissing: number;
  /** Releases with a verdict and no signed attestation. */
  unattested: number;
  cutsFailed: number;
  cutsUnfinished: number;
  /** One line per problem found, for the log. */
  problems: string[];
}

const AUTHORIZATION_USED = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export async function reconcileCluster(cluster: Cluster): Promise<Reconciliation> {
  const chain = createPublicClient({ transport: http(cluster.rpcUrl) });
  const payTo = cluster.env.PLATFORM_PAYOUT_ADDRESS!.toLowerCase();
  const [used, transfers] = await Promise.all([
    chain.getLogs({ address: BASE.usdc, event: AUTHORIZATION_USED, fromBlock: 0n }),
    chain.getLogs({ address: BASE.usdc, event: TRANSFER, fromBlock: 0n }),
  ]);
  const transferOf = new Map(transfers.map((log) => [log.transactionHash, log.args]));
  // Every authorization the chain executed that paid the platform: payer:nonce → amount.
  const settled = new Map<string, bigint>();
  for (const log of used) {
    const transfer = transferOf.get(log.transactionHash);
    if (transfer?.to?.toLowerCase() !== payTo) continue;
    settled.set(`${log.args.authorizer!.toLowerCase()}:${log.args.nonce!.toLowerCase()}`, transfer.value!);
  }

  const db = new pg.Client({ connectionString: cluster.databaseUrl });
  await db.connect();
  try {
    const payments = (
      await db.query<{
        id: string;
        payer: string;
        nonce: string;
        state: string;
        listing_id: string;
        version: string;
        duplicate: boolean;
      }>('select id, payer, nonce, state, listing_id, version, duplicate from payments')
    ).rows;
    const purchases = (
      await db.query<{ id: string; payment_id: string | null; amount_micro: string }>(
        'select id, payment_id, amount_micro from purchases',
      )
    ).rows;
    const entitlements = (
      await db.query<{ purchase_id: string | null }>('select purchase_id from entitlements')
    ).rows;
    const ledger = (
      await db.query<{ total: string | null }>(
        "select sum(amount_micro + fee_micro)::text as total from ledger_entries where kind = 'credit'",
      )
    ).rows[0]!;
    const releases = (
      await db.query<{ artifact_key: string | null; verdict: string; attested: boolean }>(
        `select artifact_key, verdict,
           exists (select 1 from release_attestations a where a.release_id = releases.id) as attested
         from releases`,
      )
    ).rows;
    const cuts = (await db.query<{ state: string }>('select state from release_cuts')).rows;

    const problems: string[] = [];
    const paymentByAuthorization = new Map(
      payments.map((p) => [`${p.payer.toLowerCase()}:${p.nonce.toLowerCase()}`, p]),
    );
    const purchasesByPayment = new Map<string, typeof purchases>();
    for (const purchase of purchases) {
      if (!purchase.payment_id) continue;
      purchasesByPayment.set(purchase.payment_id, [
        ...(purchasesByPayment.get(purchase.payment_id) ?? []),
        purchase,
      ]);
    }
    const entitled = new Map<string, number>();
    for (const e of entitlements)
      if (e.purchase_id) entitled.set(e.purchase_id, (entitled.get(e.purchase_id) ?? 0) + 1);

    let lost = 0;
    let double = 0;
    let chainForPurchases = 0n;
    const chargedFor = new Map<string, number>();
    for (const [authorization, amount] of settled) {
      const payment = paymentByAuthorization.get(authorization);
      const bought = payment ? (purchasesByPayment.get(payment.id) ?? []) : [];
      if (payment?.state !== 'settled' || bought.length !== 1 || entitled.get(bought[0]!.id) === undefined) {
        lost += 1;
        problems.push(
          `lost: ${authorization} settled on chain; payment ${payment?.state ?? 'missing'}, purchases ${bought.length}`,
        );
        continue;
      }
      chainForPurchases += amount;
      if (payment.duplicate) {
        double += 1;
        problems.push(`double: ${authorization} settled beside another payment for the same version`);
      }
      const slot = `${payment.payer.toLowerCase()}:${payment.listing_id}:${payment.version}`;
      chargedFor.set(slot, (chargedFor.get(slot) ?? 0) + 1);
    }
    for (const [slot, times] of chargedFor) {
      if (times > 1) {
        double += times - 1;
        problems.push(`double: ${slot} charged ${times} times on chain`);
      }
    }

    const settledPaymentIds = new Set(
      payments
        .filter(
          (p) => p.state === 'settled' && settled.has(`${p.payer.toLowerCase()}:${p.nonce.toLowerCase()}`),
        )
        .map((p) => p.id),
    );
    const paidPurchase = new Set(
      purchases.filter((p) => p.payment_id && settledPaymentIds.has(p.payment_id)).map((p) => p.id),
    );
    let unpaidGrants = 0;
    for (const e of entitlements) {
      if (e.purchase_id && paidPurchase.has(e.purchase_id)) continue;
      unpaidGrants += 1;
      problems.push(`unpaid grant: entitlement of purchase ${e.purchase_id ?? 'none'}`);
    }

    const ledgerGapMicro = chainForPurchases - BigInt(ledger.total ?? '0');
    if (ledgerGapMicro !== 0n)
      problems.push(`ledger: chain settled ${chainForPurchases}, credits and fees ${ledger.total}`);

    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: cluster.env.S3_ENDPOINT,
      forcePathStyle: true,
      credentials: {
        accessKeyId: cluster.env.S3_ACCESS_KEY_ID!,
        secretAccessKey: cluster.env.S3_SECRET_ACCESS_KEY!,
      },
    });
    let zipsMissing = 0;
    for (const release of releases) {
      if (!release.artifact_key) {
        if (release.verdict !== 'fail') {
          zipsMissing += 1;
          problems.push(`release without a zip and not failed (${release.verdict})`);
        }
        continue;
      }
      const present = await s3
        .send(new HeadObjectCommand({ Bucket: CLUSTER_BUCKET, Key: release.artifact_key }))
        .then(
          () => true,
          () => false,
        );
      if (!present) {
        zipsMissing += 1;
        problems.push(`zip missing from the bucket: ${release.artifact_key}`);
      }
    }
    s3.destroy();
    // A release's verdict and its signed attestation are written in one transaction.
    const unattested = releases.filter(
      (release) => release.verdict !== 'pending' && !release.attested,
    ).length;
    if (unattested > 0) problems.push(`${unattested} releases with a verdict but no attestation`);
    const cutsUnfinished = cuts.filter((cut) => cut.state === 'queued').length;
    if (cutsUnfinished > 0) problems.push(`${cutsUnfinished} cuts still queued`);
    return {
      settledOnChain: settled.size,
      purchases: purchases.length,
      entitlements: entitlements.length,
      lost,
      unpaidGrants,
      double,
      ledgerGapMicro,
      releases: releases.length,
      zipsMissing,
      unattested,
      cutsFailed: cuts.filter((cut) => cut.state === 'failed' || cut.state === 'refused').length,
      cutsUnfinished,
      problems,
    };
  } finally {
    await db.end();
  }
}

/** Whether the books balance: nothing lost, granted unpaid or charged twice, and every release accounted for. */
export function balanced(r: Reconciliation): boolean {
  return (
    r.lost === 0 &&
    r.unpaidGrants === 0 &&
    r.double === 0 &&
    r.ledgerGapMicro === 0n &&
    r.zipsMissing === 0 &&
    r.unattested === 0 &&
    r.cutsUnfinished === 0
  );
}

export function reconciliationLine(r: Reconciliation): string {
  return (
    `settled on chain ${r.settledOnChain}, purchases ${r.purchases}, entitlements ${r.entitlements}, ` +
    `ledger gap ${r.ledgerGapMicro} micro-USDC, releases ${r.releases} (zips missing ${r.zipsMissing}, ` +
    `unattested ${r.unattested}, ` +
    `cuts failed ${r.cutsFailed}, unfinished ${r.cutsUnfinished}): ` +
    `lost ${r.lost}, unpaid grants ${r.unpaidGrants}, double ${r.double}`
  );
}
