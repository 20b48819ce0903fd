import type { Database } from '../../src/db/connect.js';

/**
 * TEST FIXTURE: representative rows for a database made by an earlier version, written at any
 * migration step. Each row names every column it ever had (the release prices dropped by 0018,
 * the duplicate flag added by 0007…); at a given step only the tables and columns that exist there
 * are written, so one set of rows stands for what every earlier version could have stored.
 */

const at = (day: number, hour = 12) => new Date(Date.UTC(2026, 9, day, hour)).toISOString();
const hex = (n: number, length: number) => `0x${n.toString(16).padStart(length, '0')}`;
const address = (n: number) => hex(n, 40);
const txHash = (n: number) => hex(n, 64);

export const IDS = {
  alice: '00000000-0000-4000-8000-00000000000a',
  bob: '00000000-0000-4000-8000-00000000000b',
  tools: '00000000-0000-4000-8000-0000000000a1',
  notes: '00000000-0000-4000-8000-0000000000b1',
  toolsPass: '00000000-0000-4000-8000-000000000a10',
  toolsFail: '00000000-0000-4000-8000-000000000a11',
  toolsPending: '00000000-0000-4000-8000-000000000a12',
  notesPass: '00000000-0000-4000-8000-000000000b10',
  paySettled: '00000000-0000-4000-8000-0000000000c1',
  payDuplicate: '00000000-0000-4000-8000-0000000000c2',
  paySettling: '00000000-0000-4000-8000-0000000000c3',
  payFailed: '00000000-0000-4000-8000-0000000000c4',
  payFee: '00000000-0000-4000-8000-0000000000c5',
  purchaseSettled: '00000000-0000-4000-8000-0000000000d1',
  purchaseFee: '00000000-0000-4000-8000-0000000000d5',
  sweepSent: '00000000-0000-4000-8000-0000000000e1',
  sweepFailed: '00000000-0000-4000-8000-0000000000e2',
  sweepSending: '00000000-0000-4000-8000-0000000000e3',
  hookCreator: '00000000-0000-4000-8000-0000000000f1',
  hookHolder: '00000000-0000-4000-8000-0000000000f2',
  hookEvent: '00000000-0000-4000-8000-0000000000f3',
} as const;

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = address(0x9999);
const buyers = { x: address(0x1001), y: address(0x1002), z: address(0x1003), w: address(0x1004) };

/** What the books must say after any upgrade: credits less sweeps plus reversals, per creator. */
export const EXPECTED_BALANCES = new Map<string, bigint>([
  // 2.00 credited, 2.00 swept and sent.
  [IDS.alice, 0n],
  // 0.95 credited (0.05 fee), 0.50 swept and reversed, 0.40 swept and still sending.
  [IDS.bob, 550_000n],
]);

const scan = (verdict: string) => ({
  verdict,
  scanner_version: 'scan-1',
  at: at(2),
  counts: { blocking: verdict === 'fail' ? 1 : 0, disclosed: 0, review: 0 },
  checks: [{ id: 'secrets', tool: 'repo402', tool_version: '1', status: 'pass', findings: 0, at: at(2) }],
});
const computed = {
  licence: { spdx: 'MIT', verdict: 'allowed' },
  // Before 0015 the tree lived here; 0015 moves it to release_tree_parts.
  tree: [
    { path: 'README.md', size: 10, binary: false },
    { path: 'src/a.js', size: 20, binary: false },
  ],
};

function release(id: string, listingId: string, version: string, verdict: string, day: number) {
  const [major, minor, patch] = version.split('.').map(Number);
  return {
    id,
    listing_id: listingId,
    version,
    major,
    minor,
    patch,
    tag: `v${version}`,
    commit_sha: 'a'.repeat(39) + String(patch),
    artifact_key: `artifacts/${id}.zip`,
    artifact_sha256: 'b'.repeat(63) + String(patch),
    size_bytes: 1234,
    sbom_key: null,
    published_at: at(day),
    changelog: `Version ${version}`,
    diff_summary: {
      files_added: 1,
      files_changed: 0,
      files_removed: 0,
      additions: 1,
      deletions: 0,
      components_touched: [],
    },
    computed: verdict === 'pending' ? null : computed,
    scan: verdict === 'pending' ? null : scan(verdict),
    verdict,
    analyzer_version: verdict === 'pending' ? null : 'analysis-1',
    scanner_version: verdict === 'pending' ? null : 'scan-1',
    // Dropped by 0018; 0017 turns them into the on-sale prices, which later versions record.
    price_micro: '2000000',
    update_price_micro: '0',
    on_sale_at: verdict === 'pass' ? at(3) : null,
    on_sale_price_micro: verdict === 'pass' ? '2000000' : null,
    on_sale_update_price_micro: verdict === 'pass' ? '0' : null,
  };
}

function payment(
  id: string,
  fields: { payer: string; listing: string; creator: string; version: string; amount: string; state: string },
  extra: Record<string, unknown>,
) {
  return {
    id,
    asset: USDC,
    payer: fields.payer,
    nonce: txHash(Number.parseInt(id.slice(-2), 16)),
    network: 'eip155:8453',
    pay_to: PAY_TO,
    amount_micro: fields.amount,
    listing_id: fields.listing,
    creator_id: fields.creator,
    version: fields.version,
    kind: 'new',
    from_version: null,
    update_price_micro: '0',
    source: 'http',
    payload: { x402Version: 2 },
    requirements: {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: fields.amount,
      payTo: PAY_TO,
      asset: USDC,
    },
    valid_before: at(10, 13),
    state: fields.state,
    lease_until: null,
    attempts: 1,
    transaction: null,
    error_reason: null,
    created_at: at(10),
    updated_at: at(10),
    settled_at: null,
    duplicate: false,
    ...extra,
  };
}

/** Table by table, in an order that satisfies every foreign key. */
export const ROWS: Record<string, Record<string, unknown>[]> = {
  invites: [{ code_hash: 'c'.repeat(64), created_at: at(1), used_at: at(1), used_by: IDS.alice }],
  platform_settings: [{ key: 'paused', value: false, updated_at: at(1) }],
  creators: [
    {
      id: IDS.alice,
      handle: 'alice',
      payout_address: address(0xa11ce),
      abuse_contact: 'abuse@alice.example',
      accepted_terms_version: '2026-11-01',
      created_at: at(1),
    },
    {
      id: IDS.bob,
      handle: 'bob',
      payout_address: address(0xb0b),
      abuse_contact: 'abuse@bob.example',
      accepted_terms_version: '2026-11-01',
      created_at: at(1),
    },
  ],
  payout_address_claims: [
    { address: address(0xa11ce), creator_id: IDS.alice, claimed_at: at(1) },
    { address: address(0xb0b), creator_id: IDS.bob, claimed_at: at(1) },
  ],
  api_keys: [
    {
      creator_id: IDS.alice,
      kind: 'agent',
      key_hash: 'd'.repeat(64),
      scopes: '{listings:read,listings:write}',
      created_at: at(1),
    },
  ],
  listings: [
    {
      id: IDS.tools,
      creator_id: IDS.alice,
      owner: 'alice',
      slug: 'tools',
      source: 'hosted',
      status: 'published',
      price_micro: '2000000',
      update_price_micro: '0',
      description: 'Tools',
      trigger_hint: 'When tooling',
      licence: 'MIT',
      created_at: at(1),
      published_at: at(3),
    },
    {
      id: IDS.notes,
      creator_id: IDS.bob,
      owner: 'bob',
      slug: 'notes',
      source: 'hosted',
      status: 'published',
      price_micro: '1000000',
      update_price_micro: '500000',
      description: 'Notes',
      trigger_hint: 'When noting',
      licence: 'MIT',
      created_at: at(1),
      published_at: at(3),
    },
  ],
  deploy_keys: [
    {
      listing_id: IDS.tools,
      fingerprint: 'SHA256:abc',
      algorithm: 'ssh-ed25519',
      public_key: 'ssh-ed25519 AAAA',
      created_at: at(1),
    },
  ],
  releases: [
    release(IDS.toolsPass, IDS.tools, '1.0.0', 'pass', 2),
    release(IDS.toolsFail, IDS.tools, '1.1.0', 'fail', 4),
    release(IDS.toolsPending, IDS.tools, '1.2.0', 'pending', 5),
    release(IDS.notesPass, IDS.notes, '0.1.0', 'pass', 2),
  ],
  // From 0015 on the tree is stored in parts, and `computed` no longer holds it.
  release_tree_parts: [IDS.toolsPass, IDS.toolsFail, IDS.notesPass].map((id) => ({
    release_id: id,
    part: 0,
    files: computed.tree,
  })),
  release_cuts: [
    {
      listing_id: IDS.tools,
      version: '1.2.0',
      tag: 'v1.2.0',
      commit_sha: 'a'.repeat(40),
      trigger: 'push',
      state: 'running',
      requested_at: at(5),
    },
  ],
  payments: [
    payment(
      IDS.paySettled,
      {
        payer: buyers.x,
        listing: IDS.tools,
        creator: IDS.alice,
        version: '1.0.0',
        amount: '2000000',
        state: 'settled',
      },
      { transaction: txHash(0xc1), settled_at: at(10) },
    ),
    // The same buyer and version paid twice before 0007's rule: 0007 flags the later one.
    payment(
      IDS.payDuplicate,
      {
        payer: buyers.x,
        listing: IDS.tools,
        creator: IDS.alice,
        version: '1.0.0',
        amount: '2000000',
        state: 'settled',
      },
      { transaction: txHash(0xc2), settled_at: at(10, 14), created_at: at(10, 14), duplicate: true },
    ),
    payment(
      IDS.paySettling,
      {
        payer: buyers.y,
        listing: IDS.notes,
        creator: IDS.bob,
        version: '0.1.0',
        amount: '1000000',
        state: 'settling',
      },
      { lease_until: at(10, 12) },
    ),
    payment(
      IDS.payFailed,
      {
        payer: buyers.z,
        listing: IDS.tools,
        creator: IDS.alice,
        version: '1.0.0',
        amount: '2000000',
        state: 'failed',
      },
      { error_reason: 'expired_unsettled' },
    ),
    payment(
      IDS.payFee,
      {
        payer: buyers.w,
        listing: IDS.notes,
        creator: IDS.bob,
        version: '0.1.0',
        amount: '1000000',
        state: 'settled',
      },
      { transaction: txHash(0xc5), settled_at: at(11), created_at: at(11) },
    ),
  ],
  purchases: [
    {
      id: IDS.purchaseSettled,
      listing_id: IDS.tools,
      wallet: buyers.x,
      version: '1.0.0',
      kind: 'new',
      amount_micro: '2000000',
      all_versions: true,
      source: 'http',
      payment_id: IDS.paySettled,
      transaction: txHash(0xc1),
      created_at: at(10),
    },
    {
      id: IDS.purchaseFee,
      listing_id: IDS.notes,
      wallet: buyers.w,
      version: '0.1.0',
      kind: 'new',
      amount_micro: '1000000',
      all_versions: false,
      source: 'mcp',
      payment_id: IDS.payFee,
      transaction: txHash(0xc5),
      created_at: at(11),
    },
  ],
  entitlements: [
    {
      wallet: buyers.x,
      listing_id: IDS.tools,
      version: '1.0.0',
      purchase_id: IDS.purchaseSettled,
      created_at: at(10),
    },
    {
      wallet: buyers.w,
      listing_id: IDS.notes,
      version: '0.1.0',
      purchase_id: IDS.purchaseFee,
      created_at: at(11),
    },
  ],
  payout_sweeps: [
    {
      id: IDS.sweepSent,
      creator_id: IDS.alice,
      address: address(0xa11ce),
      amount_micro: '2000000',
      state: 'sent',
      transaction: txHash(0xe1),
      raw_transaction: '0x02',
      created_at: at(12),
      finished_at: at(12),
    },
    {
      id: IDS.sweepFailed,
      creator_id: IDS.bob,
      address: address(0xb0b),
      amount_micro: '500000',
      state: 'failed',
      error: 'reverted',
      created_at: at(12),
      finished_at: at(12),
    },
    {
      id: IDS.sweepSending,
      creator_id: IDS.bob,
      address: address(0xb0b),
      amount_micro: '400000',
      state: 'sending',
      transaction: txHash(0xe3),
      raw_transaction: '0x02',
      created_at: at(13),
    },
  ],
  ledger_entries: [
    {
      creator_id: IDS.alice,
      kind: 'credit',
      amount_micro: '2000000',
      fee_micro: '0',
      purchase_id: IDS.purchaseSettled,
      created_at: at(10),
    },
    {
      creator_id: IDS.bob,
      kind: 'credit',
      amount_micro: '950000',
      fee_micro: '50000',
      purchase_id: IDS.purchaseFee,
      created_at: at(11),
    },
    {
      creator_id: IDS.alice,
      kind: 'sweep',
      amount_micro: '2000000',
      sweep_id: IDS.sweepSent,
      created_at: at(12),
    },
    {
      creator_id: IDS.bob,
      kind: 'sweep',
      amount_micro: '500000',
      sweep_id: IDS.sweepFailed,
      created_at: at(12),
    },
    {
      creator_id: IDS.bob,
      kind: 'sweep_reversal',
      amount_micro: '500000',
      sweep_id: IDS.sweepFailed,
      created_at: at(12, 13),
    },
    {
      creator_id: IDS.bob,
      kind: 'sweep',
      amount_micro: '400000',
      sweep_id: IDS.sweepSending,
      created_at: at(13),
    },
  ],
  unresolved_transfers_out: [
    {
      transaction: txHash(0xf1),
      to_address: address(0xf00d),
      amount_micro: '300000',
      at: at(14),
      found_at: at(15),
    },
    {
      transaction: txHash(0xf2),
      to_address: address(0xcafe),
      amount_micro: '100000',
      at: at(14),
      found_at: at(15),
      resolution: 'not_a_payout',
      reason: 'fees moved to the treasury',
      resolved_at: at(15, 13),
    },
  ],
  unattributed_sales: [
    {
      transaction: txHash(0xf3),
      payer: buyers.z,
      nonce: hex(0xf3, 64),
      amount_micro: '3500000',
      valid_after: at(14, 0),
      valid_before: at(14, 1),
      at: at(14, 0),
      reason: 'no listing on sale at that price',
      found_at: at(15),
    },
    {
      transaction: txHash(0xf4),
      payer: buyers.y,
      nonce: hex(0xf4, 64),
      amount_micro: '700000',
      valid_after: at(14, 0),
      valid_before: at(14, 1),
      at: at(14, 0),
      reason: 'several listings match',
      found_at: at(15),
      resolution: 'refunded',
      note: 'refunded by hand',
      resolved_at: at(15, 13),
    },
  ],
  chain_checkpoint: [{ id: 1, block: '123456', at: at(15), updated_at: at(15) }],
  devnet_transactions: [
    { block_timestamp: 1790000000, raw: '0x02f8', created_at: at(10), token_name: 'USD Coin' },
  ],
  advisories: [
    {
      id: 'GHSA-test-0001',
      modified: at(1),
      summary: 'A test advisory',
      severity: 'HIGH',
      malicious: false,
      aliases: [],
      record: { id: 'GHSA-test-0001' },
      imported_at: at(1),
    },
  ],
  reports: [
    {
      listing_id: IDS.notes,
      version: '0.1.0',
      category: 'secret_exposed',
      text: 'A token in config.js',
      created_at: at(14),
      resolved_at: at(15),
      resolution_note: 'rotated',
    },
  ],
  audit_log: [
    {
      at: at(15),
      action: 'release.yank',
      subject: 'bob/notes@0.1.0',
      reason: 'a token in the zip',
      host: 'web-1',
    },
  ],
  domain_events: [
    {
      at: at(15),
      type: 'release.yanked',
      creator_id: IDS.bob,
      listing_id: IDS.notes,
      data: { listing: 'bob/notes', version: '0.1.0', reason: 'a token in the zip' },
    },
  ],
  webhook_subscriptions: [
    {
      id: IDS.hookCreator,
      kind: 'creator',
      creator_id: IDS.alice,
      url: 'https://93.184.216.34/hooks',
      events: ['release.cut', 'sale'],
      sealed_secret: 'c2VhbGVk',
      created_at: at(3),
      consecutive_failures: 0,
    },
    {
      id: IDS.hookHolder,
      kind: 'holder',
      wallet: buyers.x,
      listing_id: IDS.tools,
      url: 'https://93.184.216.34/holder',
      events: ['release.published'],
      sealed_secret: 'c2VhbGVk',
      created_at: at(3),
      consecutive_failures: 5,
      disabled_at: at(4),
      disabled_reason: 'Disabled: the release.published event failed on all 6 attempts',
    },
  ],
  webhook_events: [
    {
      id: IDS.hookEvent,
      type: 'sale',
      audience: 'creator',
      creator_id: IDS.alice,
      listing_id: IDS.tools,
      data: { version: '1.0.0', amount_micro: '2000000' },
      dedupe_key: `sale:${IDS.purchaseSettled}`,
      created_at: at(3),
      fanned_out_at: at(3),
    },
  ],
  webhook_deliveries: [
    {
      event_id: IDS.hookEvent,
      subscription_id: IDS.hookCreator,
      state: 'delivered',
      attempts: 1,
      last_attempt_at: at(3),
      last_status: 204,
      created_at: at(3),
      delivered_at: at(3),
    },
  ],
};

/** A row as the version at this step wrote it, where a later step moved a part of it elsewhere. */
function adapted(
  table: string,
  row: Record<string, unknown>,
  columns: Map<string, unknown>,
): Record<string, unknown> {
  if (table === 'releases' && columns.has('release_tree_parts') && row.computed) {
    const { tree: _tree, ...rest } = row.computed as Record<string, unknown>;
    return { ...row, computed: rest };
  }
  return row;
}

/** Writes every row whose table exists at this step, with the columns that exist there. */
export async function writeRows(database: Database): Promise<void> {
  const { rows } = await database.query<{ table_name: string; column_name: string; data_type: string }>(
    `select table_name, column_name, data_type from information_schema.columns where table_schema = 'public'`,
  );
  const columns = new Map<string, Map<string, string>>();
  for (const row of rows) {
    if (!columns.has(row.table_name)) columns.set(row.table_name, new Map());
    columns.get(row.table_name)!.set(row.column_name, row.data_type);
  }
  for (const [table, tableRows] of Object.entries(ROWS)) {
    const present = columns.get(table);
    if (!present) continue;
    for (const written of tableRows) {
      const row = adapted(table, written, columns);
      const names = Object.keys(row).filter((name) => present.has(name));
      const values = names.map((name) => {
        const value = row[name];
        return present.get(name) === 'jsonb' && value !== null ? JSON.stringify(value) : value;
      });
      await database.query(
        `insert into "${table}" (${names.map((n) => `"${n}"`).join(', ')}) values (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
        values,
      );
    }
  }
}
