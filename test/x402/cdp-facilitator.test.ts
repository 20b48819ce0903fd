import { generateJwt } from '@coinbase/cdp-sdk/auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { purchases } from '../../src/db/schema/index.js';
import type { DevnetChain } from '../../src/devnet/chain.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { newWallet } from '../identity/support.js';
import { buy, createPaymentsApp, type PaymentsTestApp, publishListing } from '../purchases/support.js';
import {
  CDP_FACILITATOR_PATH,
  type CdpFacilitator,
  newCdpKey,
  startCdpFacilitator,
} from '../support/cdp-facilitator.js';
import { type BaseStandIn, startBaseStandIn } from '../support/chain.js';

/**
 * Issue 39: Coinbase's facilitator requires a CDP JWT on every request. Mainnet mode against a
 * stand-in that checks those tokens as Coinbase documents them.
 */
describe('an authenticated facilitator (CDP JWTs)', () => {
  const key = newCdpKey();
  let base: BaseStandIn;
  let chain: DevnetChain;
  let cdp: CdpFacilitator;
  const apps: PaymentsTestApp[] = [];

  beforeAll(async () => {
    base = await startBaseStandIn();
    chain = base.chain;
    cdp = await startCdpFacilitator(devnetFacilitator(chain), key);
  });
  afterAll(async () => {
    for (const t of apps) await t.close();
    await cdp?.close();
    await base?.close();
  });

  async function mainnetApp(credentials: { id?: string; secret?: string }) {
    const t = await createPaymentsApp({
      env: {
        PAYMENTS_MODE: 'mainnet',
        FACILITATOR_URL: cdp.url,
        BASE_RPC_URL: base.rpc.url,
        PLATFORM_PAYOUT_ADDRESS: newWallet().address,
        ...(credentials.id ? { CDP_API_KEY_ID: credentials.id } : {}),
        ...(credentials.secret ? { CDP_API_KEY_SECRET: credentials.secret } : {}),
      },
    });
    apps.push(t);
    return t;
  }

  it('sells: verify and settle carry a fresh token for their own method and path', async () => {
    const t = await mainnetApp({ id: key.id, secret: key.secret });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const buyer = newWallet();
    await chain.fund(buyer.address, 5_000_000n);
    cdp.accepted.length = 0;
    const paid = await buy(t, fixture, buyer);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(cdp.accepted).toEqual([
      `POST ${CDP_FACILITATOR_PATH}/verify`,
      `POST ${CDP_FACILITATOR_PATH}/settle`,
    ]);
    expect(await chain.balanceOf(buyer.address)).toBe(3_000_000n);
  });

  it('a key the facilitator does not know is refused there, and the purchase is not granted; the secret is never shown', async () => {
    const stranger = newCdpKey(key.id);
    const t = await mainnetApp({ id: key.id, secret: stranger.secret });
    const fixture = await publishListing(t, { priceMicro: 2_000_000n });
    const buyer = newWallet();
    await chain.fund(buyer.address, 5_000_000n);
    const refusedBefore = cdp.refused.length;
    const res = await buy(t, fixture, buyer);
    expect(res.statusCode).toBeGreaterThanOrEqual(500);
    expect(res.json()).toMatchObject({ code: 'internal' });
    expect(res.body).not.toContain(stranger.secret);
    expect(res.body).not.toContain('Bearer');
    expect(cdp.refused.length).toBeGreaterThan(refusedBefore);
    expect(await t.ctx.database.db.select().from(purchases)).toEqual([]);
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
  });

  it('the stand-in refuses what Coinbase would: no token, an expired one, one for another path or key', async () => {
    const host = new URL(cdp.url).host;
    const verify = `${CDP_FACILITATOR_PATH}/verify`;
    const token = (overrides: Partial<Parameters<typeof generateJwt>[0]> = {}) =>
      generateJwt({
        apiKeyId: key.id,
        apiKeySecret: key.secret,
        requestMethod: 'POST',
        requestHost: host,
        requestPath: verify,
        ...overrides,
      });
    const post = async (authorization?: string) =>
      (
        await fetch(cdp.url.replace(CDP_FACILITATOR_PATH, verify), {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          body: '{}',
        })
      ).status;
    expect(await post()).toBe(401);
    expect(await post(`Bearer ${await token({ expiresIn: -10 })}`)).toBe(401);
    expect(await post(`Bearer ${await token({ requestPath: `${CDP_FACILITATOR_PATH}/settle` })}`)).toBe(401);
    expect(await post(`Bearer ${await token({ requestMethod: 'GET' })}`)).toBe(401);
    expect(await post(`Bearer ${await token({ apiKeySecret: newCdpKey().secret })}`)).toBe(401);
    // The right token passes authentication (and the empty body then fails as a body).
    expect(await post(`Bearer ${await token()}`)).toBe(500);
  });

  it('refuses to start with half of the credentials, naming the missing one and never the secret', () => {
    const base = {
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: 'https://api.cdp.coinbase.com/platform/v2/x402',
      BASE_RPC_URL: 'http://127.0.0.1:1',
      PLATFORM_PAYOUT_ADDRESS: newWallet().address,
    };
    expect(() => loadConfig({ ...base, CDP_API_KEY_ID: key.id })).toThrow(/CDP_API_KEY_SECRET/);
    let thrown: unknown;
    try {
      loadConfig({ ...base, CDP_API_KEY_SECRET: key.secret });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(String((thrown as Error).message)).toContain('CDP_API_KEY_ID');
    expect(String((thrown as Error).message)).not.toContain(key.secret);
    expect(() =>
      loadConfig({ PAYMENTS_MODE: 'devnet', CDP_API_KEY_ID: key.id, CDP_API_KEY_SECRET: key.secret }),
    ).toThrow(/FACILITATOR_URL/);
  });
});
