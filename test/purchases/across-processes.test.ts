import { rm } from 'node:fs/promises';
import { generatePrivateKey } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerEntries, payments, purchases } from '../../src/db/schema/index.js';
import { type DevnetChain, startDevnetChain } from '../../src/devnet/chain.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { encodeWalletSignature } from '../../src/identity/wallet-signature.js';
import { newWallet } from '../identity/support.js';
import { USDC_DOMAIN } from '../support/chain.js';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../support/db.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';
import { type JsonRpcServer, serveJsonRpc } from '../support/json-rpc.js';
import { type ServerProcess, startServerProcess } from '../support/process.js';
import {
  createPaymentsApp,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
  signPayment,
} from './support.js';

/**
 * The payment guarantees with real `repo402 serve` processes in mainnet mode, sharing one Base
 * stand-in (an EVM behind JSON-RPC, the reference facilitator behind HTTP): a process killed
 * between the settle and the record loses nothing, and two API processes never settle two
 * payments of one buyer for one version. Nothing here shares memory with the servers.
 */
describe('payments across processes', () => {
  let baseDb: TestDatabase;
  let base: DevnetChain;
  let rpc: JsonRpcServer;
  let facilitator: FaultyFacilitator;
  let seed: PaymentsTestApp | undefined;
  const servers: ServerProcess[] = [];

  beforeEach(async () => {
    baseDb = await openTestDatabase('pglite');
    base = await startDevnetChain({
      db: baseDb.db,
      platformKey: generatePrivateKey(),
      tokenName: USDC_DOMAIN.name,
    });
    rpc = await serveJsonRpc((method, params) => base.request({ method, params } as never));
    facilitator = await startFaultyFacilitator(devnetFacilitator(base));
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop('SIGKILL');
    if (seed) {
      await seed.close();
      if (seed.config.databaseUrl === undefined) await rm(seed.dataDir, { recursive: true, force: true });
    }
    seed = undefined;
    await facilitator.close();
    await rpc.close();
    await baseDb.close();
  });

  const payTo = newWallet().address;
  const mainnetEnv = () => ({
    PAYMENTS_MODE: 'mainnet',
    FACILITATOR_URL: facilitator.url,
    BASE_RPC_URL: rpc.url,
    PLATFORM_PAYOUT_ADDRESS: payTo,
  });

  /**
   * A published listing in a database the server processes will use: PostgreSQL shared with this
   * test, or PGlite on disk in a DATA_DIR handed over once the seeding app has closed it.
   */
  async function seeded(backend: 'pglite' | 'postgres') {
    seed = await createPaymentsApp({ backend, onDisk: backend === 'pglite', env: mainnetEnv() });
    const fixture = await publishListing(seed, { priceMicro: 2_000_000n });
    const env: Record<string, string> = {
      ...mainnetEnv(),
      DATA_DIR: seed.dataDir,
      // The seeding app's secret, so every process reads the others' quotes and download tokens.
      APP_SECRET: '07'.repeat(32),
      SETTLEMENT_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'warn',
    };
    if (backend === 'postgres') env.DATABASE_URL = seed.database.url!;
    else await seed.database.close();
    return { fixture, env };
  }

  async function serve(env: Record<string, string>) {
    const server = await startServerProcess(env);
    servers.push(server);
    return server;
  }

  async function signedPayments(server: ServerProcess, fixture: ListingFixture, count: number) {
    const buyer = newWallet();
    await base.fund(buyer.address, 10_000_000n);
    const res = await fetch(`${server.url}/api/r/${fixture.owner}/${fixture.slug}`);
    expect(res.status).toBe(402);
    const required = await res.json();
    const headers = await Promise.all(
      Array.from({ length: count }, async () => ({
        'payment-signature': await signPayment(required, buyer),
        'x-quote-id': required.extra.quote_id as string,
      })),
    );
    return { buyer, headers };
  }

  const buyFrom = (server: ServerProcess, fixture: ListingFixture, headers: Record<string, string>) =>
    fetch(`${server.url}/api/r/${fixture.owner}/${fixture.slug}`, { headers });

  describe.each(BACKENDS)('on %s', (backend) => {
    it('a server killed between the settle and the record: after a restart the same payment is granted, once', async () => {
      const { fixture, env } = await seeded(backend);
      const first = await serve(env);
      const { buyer, headers } = await signedPayments(first, fixture, 1);
      // The facilitator settles on chain at once and holds its answer back: the kill lands between.
      facilitator.mode = 'delay';
      facilitator.delayMs = 10_000;
      const inFlight = buyFrom(first, fixture, headers[0]!).catch((error: unknown) => error);
      for (let i = 0; i < 200 && facilitator.settled === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(facilitator.settled).toBe(1);
      await first.stop('SIGKILL');
      expect(await inFlight).toBeInstanceOf(Error);
      expect(await base.balanceOf(buyer.address)).toBe(8_000_000n);

      facilitator.mode = 'ok';
      const second = await serve(env);
      let answer = await buyFrom(second, fixture, headers[0]!);
      for (let i = 0; i < 40 && answer.status !== 200 && answer.status !== 409; i += 1) {
        expect([402, 504]).toContain(answer.status);
        await new Promise((resolve) => setTimeout(resolve, 500));
        answer = await buyFrom(second, fixture, headers[0]!);
      }
      // The restarted server reads the chain as it starts (D-156) and settles the payment its
      // predecessor left: the buyer's retry is then the replay of a granted purchase, which it
      // names. Had the start not found it, the retry itself would complete it (200).
      expect([200, 409], await answer.clone().text()).toContain(answer.status);
      const body = await answer.json();
      const grant = answer.status === 200 ? body : body.details.purchase;
      expect(grant).toMatchObject({ kind: 'new', version: '1.0.0' });
      expect(grant.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const replay = await buyFrom(second, fixture, headers[0]!);
      expect(replay.status).toBe(409);
      expect((await replay.json()).details.purchase.purchase_id).toBe(grant.purchase_id);
      expect(await base.balanceOf(buyer.address)).toBe(8_000_000n);
      expect(facilitator.settled).toBe(1);
    }, 120_000);
  });

  it.runIf(BACKENDS.includes('postgres'))(
    'two API processes, ten payments of one buyer for one version: one settles',
    async () => {
      const { fixture, env } = await seeded('postgres');
      const [a, b] = await Promise.all([serve(env), serve(env)]);
      const { buyer, headers } = await signedPayments(a!, fixture, 10);
      const responses = await Promise.all(headers.map((h, i) => buyFrom(i % 2 === 0 ? a! : b!, fixture, h)));
      const statuses = await Promise.all(
        responses.map(async (res) => {
          const body = await res.json();
          return `${res.status} ${body.code ?? body.kind}`;
        }),
      );
      expect(
        statuses.filter((s) => s === '200 new'),
        statuses.join(', '),
      ).toHaveLength(1);
      for (const status of statuses.filter((s) => s !== '200 new')) {
        expect(['402 settlement_pending', '200 owned']).toContain(status);
      }
      expect(await base.balanceOf(buyer.address)).toBe(8_000_000n);
      expect(facilitator.settled).toBe(1);
      const db = seed!.ctx.database.db;
      expect(await db.select().from(purchases)).toHaveLength(1);
      expect(await db.select().from(ledgerEntries)).toHaveLength(1);
      expect((await db.select().from(payments)).filter((row) => row.state === 'settled')).toHaveLength(1);

      // The buyer, asking the other process with a wallet signature, gets the version it owns.
      const challenge = await (
        await fetch(`${b!.url}/api/auth/challenge?address=${buyer.address}&purpose=wallet_ownership`)
      ).json();
      const signature = await buyer.signMessage({ message: challenge.message });
      const owned = await buyFrom(b!, fixture, {
        'x-wallet-signature': encodeWalletSignature({
          address: buyer.address,
          nonce: challenge.nonce,
          signature,
        }),
      });
      expect(owned.status).toBe(200);
      expect((await owned.json()).kind).toBe('owned');
    },
    120_000,
  );
});
