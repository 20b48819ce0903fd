import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import type { Hex, PrivateKeyAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevnetChain } from '../../src/devnet/chain.js';
import { devnetFacilitator } from '../../src/devnet/facilitator.js';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { bearer, newWallet, registerCreator } from '../identity/support.js';
import { sshKeygen } from '../listings/support.js';
import {
  createPaymentsApp,
  type ListingFixture,
  type PaymentsTestApp,
  publishListing,
} from '../purchases/support.js';
import { commitFile, eventually, gitOverSsh, workRepo } from '../releases/support.js';
import { checkPageLayout, journeySteps, launchBrowser } from '../support/browser.js';
import { type BaseStandIn, startBaseStandIn } from '../support/chain.js';
import { type FaultyFacilitator, startFaultyFacilitator } from '../support/faulty-facilitator.js';
import { freePort } from '../support/process.js';
import {
  api,
  publishHostedListing,
  type SeededCreator,
  type SeededListing,
} from '../support/seed-over-http.js';

/**
 * Issue 38: a person buys in the browser. Real Chromium, with browser wallets announced by EIP-6963
 * (EIP-1193 providers backed by viem accounts), against a mainnet-mode server whose Base is a
 * stand-in chain with real USDC's domain and whose facilitator is the reference one over HTTP.
 */

type WalletId = 'alpha' | 'beta';
const WALLET_NAMES: Record<WalletId, string> = { alpha: 'Alpha Wallet', beta: 'Beta Wallet' };
const ICON =
  'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiPjxyZWN0IHdpZHRoPSIxIiBoZWlnaHQ9IjEiIGZpbGw9IiMwZjc2NmUiLz48L3N2Zz4=';

/** The browser's wallets: which account each holds and which chain it is on, changed by the tests. */
interface Wallets {
  accounts: Record<WalletId, PrivateKeyAccount>;
  chains: Record<WalletId, string>;
  /** Chains a wallet does not know: switching there fails with 4902 until the chain is added. */
  unknown: Record<WalletId, Set<string>>;
  /** Every chain a wallet was asked to add (EIP-3085). */
  added: unknown[];
  /** Every message a wallet was asked to sign with personal_sign. */
  signed: string[];
  /** Every transfer authorization a wallet signed. */
  payments: number;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function downloaded(download: Download): Promise<Buffer> {
  const file = await download.path();
  return readFile(file);
}

/**
 * A context whose pages see the wallets `wallets` describes: each announced by EIP-6963 (name and
 * icon), none as window.ethereum. `eth_call` goes to `chain`, as a wallet's own RPC would.
 */
async function walletContext(
  browser: Browser,
  wallets: Wallets,
  call: (method: string, params: unknown[]) => Promise<unknown>,
  options: { announce?: boolean; headers?: Record<string, string> } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    extraHTTPHeaders: options.headers,
  });
  context.setDefaultTimeout(15_000);
  await context.exposeFunction('repo402Wallet', async (id: WalletId, method: string, params: unknown[]) => {
    const account = wallets.accounts[id];
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [account.address];
      case 'eth_chainId':
        return wallets.chains[id];
      case 'wallet_switchEthereumChain': {
        const { chainId } = params[0] as { chainId: string };
        // EIP-1193 errors carry a code; the page's provider throws this as one.
        if (wallets.unknown[id].has(chainId))
          return { rpcError: { code: 4902, message: 'Unrecognized chain ID' } };
        wallets.chains[id] = chainId;
        return null;
      }
      case 'wallet_addEthereumChain': {
        const [added] = params as [{ chainId: string }];
        wallets.added.push(added);
        wallets.unknown[id].delete(added.chainId);
        wallets.chains[id] = added.chainId;
        return null;
      }
      case 'personal_sign': {
        const [message, from] = params as [Hex, string];
        if (from.toLowerCase() !== account.address.toLowerCase())
          throw new Error(`asked to sign for ${from}`);
        wallets.signed.push(Buffer.from(message.slice(2), 'hex').toString('utf8'));
        return account.signMessage({ message: { raw: message } });
      }
      case 'eth_signTypedData_v4': {
        const [from, json] = params as [string, string];
        if (from.toLowerCase() !== account.address.toLowerCase())
          throw new Error(`asked to sign for ${from}`);
        const typed = JSON.parse(json);
        const { EIP712Domain: _domain, ...types } = typed.types;
        const message = Object.fromEntries(
          Object.entries(typed.message as Record<string, unknown>).map(([name, value]) => [
            name,
            ['value', 'validAfter', 'validBefore'].includes(name) ? BigInt(value as string) : value,
          ]),
        );
        wallets.payments++;
        return account.signTypedData({ ...typed, types, message });
      }
      case 'eth_call':
        return call(method, params);
      default:
        throw new Error(`The test wallet does not support ${method}`);
    }
  });
  if (options.announce !== false) {
    await context.addInitScript(
      ({ names, icon }) => {
        const call = (window as unknown as { repo402Wallet: (...args: unknown[]) => Promise<unknown> })
          .repo402Wallet;
        const announced = Object.entries(names).map(([id, name]) =>
          Object.freeze({
            info: { uuid: `uuid-${id}`, name, icon, rdns: `test.${id}` },
            provider: {
              request: async ({ method, params }: { method: string; params?: unknown[] }) => {
                const result = (await call(id, method, params ?? [])) as {
                  rpcError?: { code: number; message: string };
                } | null;
                if (result?.rpcError)
                  throw Object.assign(new Error(result.rpcError.message), result.rpcError);
                return result;
              },
            },
          }),
        );
        const announce = () => {
          for (const detail of announced) {
            window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }));
          }
        };
        window.addEventListener('eip6963:requestProvider', announce);
        announce();
      },
      { names: WALLET_NAMES, icon: ICON },
    );
  }
  return context;
}

/** Uncaught errors in the page and anything the CSP refused: none is expected. */
function watchProblems(page: Page, problems: string[]) {
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
}

describe('buying in the browser, in mainnet mode against Base stand-ins', () => {
  let baseChain: BaseStandIn;
  let chain: DevnetChain;
  let facilitator: FaultyFacilitator;
  let t: PaymentsTestApp;
  let base: string;
  let browser: Browser;
  let fixture: ListingFixture;
  /** The journey's listing: hosted, pushed over SSH with the real git, cut and published. */
  let sold: SeededListing;
  let seller: SeededCreator;
  let ssh: SshServer;
  let sshPort: number;
  let work: Awaited<ReturnType<typeof workRepo>>;
  let sanctionsDir: string;
  const sanctioned = newWallet();
  const wallets: Wallets = {
    accounts: { alpha: newWallet(), beta: newWallet() },
    chains: { alpha: '0x2105', beta: '0x2105' },
    unknown: { alpha: new Set(), beta: new Set() },
    added: [],
    signed: [],
    payments: 0,
  };
  const problems: string[] = [];

  beforeAll(async () => {
    baseChain = await startBaseStandIn();
    chain = baseChain.chain;
    facilitator = await startFaultyFacilitator(devnetFacilitator(chain));
    sanctionsDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-sanctions-'));
    await writeFile(path.join(sanctionsDir, 'list.txt'), `${sanctioned.address}\n`);
    const port = await freePort();
    sshPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createPaymentsApp({
      jobs: [cutJob],
      env: {
        BASE_URL: base,
        SSH_PORT: String(sshPort),
        PAYMENTS_MODE: 'mainnet',
        FACILITATOR_URL: facilitator.url,
        BASE_RPC_URL: baseChain.rpc.url,
        PLATFORM_PAYOUT_ADDRESS: newWallet().address,
        SETTLEMENT_TIMEOUT_MS: '1000',
        EXPLORER_TX_URL: 'https://explorer.example/tx/{tx}',
        SANCTIONS_FILE: path.join(sanctionsDir, 'list.txt'),
        BLOCKED_COUNTRIES: 'KP',
        COUNTRY_HEADER: 'x-test-country',
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: sshPort, host: '127.0.0.1' });
    const registered = await registerCreator(t);
    seller = { handle: registered.handle, apiKey: registered.apiKey, key: await sshKeygen('ed25519') };
    work = await workRepo();
    await commitFile(work, 'README.md', '# Release notes\n\nNotes from commits.\n', 'First');
    await work.git('tag', '-a', 'v1.0.0', '-m', 'First release');
    sold = await publishHostedListing({ url: base }, seller, {
      slug: 'release-notes',
      priceMicro: '2000000',
      gitDir: work.dir,
      version: '1.0.0',
    });
    await api(base, 'PATCH', `/api/listings/${sold.id}`, 200, {
      apiKey: seller.apiKey,
      body: { update_price_micro: '500000' },
    });
    fixture = await publishListing(t, { priceMicro: 2_000_000n, updatePriceMicro: 500_000n });
    await chain.fund(wallets.accounts.alpha.address, 10_000_000n);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await ssh?.close();
    await t?.close();
    if (work) await rm(work.dir, { recursive: true, force: true });
    if (seller) await rm(path.dirname(seller.key.file), { recursive: true, force: true });
    await facilitator?.close();
    await baseChain?.close();
    await rm(sanctionsDir, { recursive: true, force: true });
    expect(problems).toEqual([]);
  });

  async function newPage(options: { announce?: boolean; headers?: Record<string, string> } = {}) {
    const context = await walletContext(
      browser,
      wallets,
      (method, params) => chain.request({ method, params } as never),
      options,
    );
    const page = await context.newPage();
    watchProblems(page, problems);
    return page;
  }
  const listingUrl = (listing: { owner: string; slug: string }) => `${base}/${listing.owner}/${listing.slug}`;
  /** The SHA-256 the manifest names for the version on sale. */
  const manifestSha = async (listing: { owner: string; slug: string }, version: string) => {
    const status = await api<{ version: string; artifact_sha256: string }>(
      base,
      'GET',
      `/api/v/${listing.owner}/${listing.slug}`,
      200,
    );
    expect(status.version).toBe(version);
    return status.artifact_sha256;
  };
  const checkout = (page: Page) => page.locator('#checkout');

  /** One step of the journey; once a step fails, the later ones (which build on it) are skipped. */
  let page: Page;
  const step = journeySteps(() => page, 'checkout-failure', 90_000);

  step(
    'offers every wallet the browser announces, by name and icon; without script the page is as it was',
    async () => {
      page = await newPage();
      await page.goto(listingUrl(sold));
      for (const name of Object.values(WALLET_NAMES)) {
        const button = checkout(page).getByRole('button', { name: `Buy with ${name}` });
        await button.waitFor();
        expect(await button.locator('img').getAttribute('src')).toBe(ICON);
      }
      await checkPageLayout(page, 'checkout-wallets');

      const plain = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
      await plain.goto(listingUrl(sold));
      for (const id of ['price', 'version', 'scan', 'buy', 'contents', 'releases']) {
        expect(await plain.locator(`#${id}`).isVisible(), id).toBe(true);
      }
      expect(await plain.locator('#checkout').innerHTML()).toBe('');
      expect(await plain.getByRole('link', { name: 'Your library' }).isVisible()).toBe(true);
      await plain.context().close();
    },
  );

  step(
    'buys: one signature to connect, one to pay, progress while it settles, the download is the zip the manifest names',
    async () => {
      await checkout(page).getByRole('button', { name: 'Buy with Alpha Wallet' }).click();
      await checkout(page).getByText('Version 1.0.0 for $2.00.').waitFor();
      expect(await checkout(page).getByText('Amount', { exact: true }).isVisible()).toBe(true);
      expect(await checkout(page).getByText('Price held until').isVisible()).toBe(true);
      expect(wallets.signed).toHaveLength(1);
      expect(wallets.signed[0]).toContain('wallet_ownership');
      await checkPageLayout(page, 'checkout-offer');

      // The first settle outlasts the service's wait: the page says it is still settling and asks again.
      facilitator.plan = (settle) => (settle === 1 ? { mode: 'delay', delayMs: 2_500 } : { mode: 'ok' });
      const download = page.waitForEvent('download', { timeout: 60_000 });
      await checkout(page).getByRole('button', { name: 'Pay $2.00' }).click();
      await checkout(page).getByText('still settling, check 1', { exact: false }).waitFor();
      const bytes = await downloaded(await download);
      facilitator.plan = undefined;
      expect(sha256(bytes)).toBe(await manifestSha(sold, '1.0.0'));
      await checkout(page).getByText('Paid. Version 1.0.0 is yours').waitFor();
      const transaction = checkout(page).getByRole('link', { name: /^0x/ });
      expect(await transaction.getAttribute('href')).toMatch(
        /^https:\/\/explorer\.example\/tx\/0x[0-9a-f]{64}$/,
      );
      expect(
        await checkout(page).getByRole('link', { name: 'signed attestation' }).getAttribute('href'),
      ).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v\/.+\/attestation/);
      expect(wallets.payments).toBe(1);
      expect(await chain.balanceOf(wallets.accounts.alpha.address)).toBe(8_000_000n);
      await checkPageLayout(page, 'checkout-paid');
    },
  );

  step(
    'a reload reconnects the wallet by itself: no button, no prompt, and says the version is owned',
    async () => {
      await page.reload();
      await checkout(page).getByText('You own version 1.0.0.').waitFor();
      expect(wallets.signed).toHaveLength(1);
    },
  );

  step(
    'the library lists what the wallet owns and downloads it again, free, without asking the wallet to sign again',
    async () => {
      await page.getByRole('link', { name: 'Your library' }).click();
      await page.getByRole('heading', { level: 1, name: 'Your library' }).waitFor();
      const shelf = page.getByRole('region', { name: `${sold.owner}/${sold.slug}` });
      const download = page.waitForEvent('download');
      await shelf.getByRole('button', { name: 'Download 1.0.0' }).click();
      expect(sha256(await downloaded(await download))).toBe(await manifestSha(sold, '1.0.0'));
      await shelf.getByRole('status').filter({ hasText: 'Downloading version 1.0.0' }).waitFor();
      expect(wallets.signed).toHaveLength(1);
      await checkPageLayout(page, 'library');
    },
  );

  step(
    'a new version: the library shows it with its changelog and update price, and sells the update',
    async () => {
      // The creator pushes a new version: cut, scanned and on sale before the library shows it.
      await commitFile(work, 'CHANGES.md', '# 1.1.0\n\nGrouped by scope.\n', 'Group notes by scope');
      await work.git('tag', '-a', 'v1.1.0', '-m', 'Group notes by scope');
      const pushed = await gitOverSsh(work.dir, seller.key.file, [
        'push',
        '-q',
        `ssh://git@127.0.0.1:${sshPort}/${sold.owner}/${sold.slug}.git`,
        'main',
        '--tags',
      ]);
      expect(pushed.code, pushed.stderr).toBe(0);
      await eventually(async () => {
        const status = await api<{ version: string }>(base, 'GET', `/api/v/${sold.owner}/${sold.slug}`, 200);
        return status.version === '1.1.0' ? status : undefined;
      }, 120_000);
      await page.reload();
      const shelf = page.getByRole('region', { name: `${sold.owner}/${sold.slug}` });
      await shelf.getByText('Version 1.1.0 is out: the update from 1.0.0 costs $0.50.').waitFor();
      expect(await shelf.getByText('Group notes by scope').isVisible()).toBe(true);
      await shelf.getByRole('button', { name: 'Buy the update to 1.1.0' }).click();
      await shelf.getByText('This wallet owns version 1.0.0. The update to 1.1.0 costs $0.50.').waitFor();
      await checkPageLayout(page, 'library-update');
      const download = page.waitForEvent('download', { timeout: 60_000 });
      await shelf.getByRole('button', { name: 'Pay $0.50' }).click();
      expect(sha256(await downloaded(await download))).toBe(await manifestSha(sold, '1.1.0'));
      expect(await chain.balanceOf(wallets.accounts.alpha.address)).toBe(7_500_000n);
      expect(wallets.signed).toHaveLength(1);

      // The listing's page now tells this wallet it owns the version on sale.
      await page.goto(listingUrl(sold));
      await checkout(page).getByText('You own version 1.1.0.').waitFor();
      const again = page.waitForEvent('download');
      await checkout(page).getByRole('button', { name: 'Download 1.1.0 (free)' }).click();
      expect(sha256(await downloaded(await again))).toBe(await manifestSha(sold, '1.1.0'));
      await checkPageLayout(page, 'checkout-owned');
    },
  );

  /** A fresh tab whose Alpha Wallet holds `account`, at the offer for `listing`. */
  async function atOffer(
    account: PrivateKeyAccount,
    listing: ListingFixture,
    headers?: Record<string, string>,
  ) {
    wallets.accounts.alpha = account;
    const tab = await newPage({ headers });
    await tab.goto(listingUrl(listing));
    await checkout(tab).getByRole('button', { name: 'Buy with Alpha Wallet' }).click();
    return tab;
  }
  const alert = (tab: Page) => checkout(tab).getByRole('alert');

  it('not enough USDC: says the balance, the price and what to add', async () => {
    const poor = newWallet();
    await chain.fund(poor.address, 1_000_000n);
    const tab = await atOffer(poor, fixture);
    await checkout(tab).getByRole('button', { name: 'Pay $2.00' }).click();
    await alert(tab)
      .filter({ hasText: 'Your wallet holds $1.00 USDC on Base and the price is $2.00. Add at least $1.00' })
      .waitFor();
    await checkPageLayout(tab, 'checkout-refused-balance');
  }, 60_000);

  it('the price changed while paying: says the new price, charges nothing, and sells at it when asked', async () => {
    const moving = await publishListing(t, { slug: 'price-moves', priceMicro: 2_000_000n });
    const buyer = newWallet();
    await chain.fund(buyer.address, 5_000_000n);
    const tab = await atOffer(buyer, moving);
    await checkout(tab).getByText('for $2.00.').waitFor();
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${moving.listingId}`,
      headers: bearer(moving.creator.apiKey),
      payload: { price_micro: '3000000' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    await checkout(tab).getByRole('button', { name: 'Pay $2.00' }).click();
    await alert(tab)
      .filter({ hasText: 'The price changed while you were paying: it is now $3.00' })
      .waitFor();
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
    const download = tab.waitForEvent('download', { timeout: 60_000 });
    await checkout(tab).getByRole('button', { name: 'Pay $3.00' }).click();
    await download;
    expect(await chain.balanceOf(buyer.address)).toBe(2_000_000n);
  }, 90_000);

  it('a retired listing: not sold, and says where what a wallet owns is', async () => {
    const retired = await publishListing(t, { slug: 'retired-kit', status: 'retired' });
    const tab = await newPage();
    await tab.goto(listingUrl(retired));
    await checkout(tab).getByRole('heading', { name: 'Download what you own' }).waitFor();
    await checkout(tab).getByRole('button', { name: 'Connect with Alpha Wallet' }).click();
    await alert(tab)
      .filter({ hasText: 'This listing is no longer sold. If your wallet bought it before, your library' })
      .waitFor();
  }, 60_000);

  it('a sanctioned wallet: refused, nothing charged', async () => {
    await chain.fund(sanctioned.address, 5_000_000n);
    const tab = await atOffer(sanctioned, fixture);
    const pay = checkout(tab).getByRole('button', { name: 'Pay $2.00' });
    const refused = alert(tab).filter({ hasText: 'its address is on a sanctions list' });
    await Promise.race([pay.waitFor(), refused.waitFor()]);
    if (await pay.isVisible()) await pay.click();
    await refused.waitFor();
    expect(await chain.balanceOf(sanctioned.address)).toBe(5_000_000n);
  }, 60_000);

  it('a blocked jurisdiction: refused, nothing charged', async () => {
    const buyer = newWallet();
    await chain.fund(buyer.address, 5_000_000n);
    const tab = await atOffer(buyer, fixture, { 'x-test-country': 'KP' });
    await alert(tab)
      .filter({ hasText: 'Purchases are not available from where you are connecting' })
      .waitFor();
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
  }, 60_000);

  it('a wallet on another chain: says which, and switches to Base when asked', async () => {
    wallets.chains.beta = '0x1';
    const tab = await newPage();
    await tab.goto(listingUrl(fixture));
    await checkout(tab).getByRole('button', { name: 'Buy with Beta Wallet' }).click();
    await alert(tab).filter({ hasText: 'Beta Wallet is on Ethereum' }).waitFor();
    await checkPageLayout(tab, 'checkout-wrong-chain');
    await checkout(tab).getByRole('button', { name: 'Switch to Base' }).click();
    await checkout(tab).getByText('for $2.00.').waitFor();
    expect(wallets.chains.beta).toBe('0x2105');
  }, 60_000);

  it('a wallet that does not know the chain is asked to add it, then pays on it', async () => {
    wallets.chains.beta = '0x1';
    wallets.unknown.beta.add('0x2105');
    const tab = await newPage();
    await tab.goto(listingUrl(fixture));
    await checkout(tab).getByRole('button', { name: 'Buy with Beta Wallet' }).click();
    await checkout(tab).getByRole('button', { name: 'Switch to Base' }).click();
    await checkout(tab).getByText('for $2.00.').waitFor();
    expect(wallets.added).toEqual([
      {
        chainId: '0x2105',
        chainName: 'Base',
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: ['https://mainnet.base.org'],
        blockExplorerUrls: ['https://basescan.org'],
      },
    ]);
    expect(wallets.chains.beta).toBe('0x2105');
  }, 60_000);

  it('a second click while connecting lands on nothing else; a computer clock minutes fast still pays', async () => {
    const buyer = newWallet();
    await chain.fund(buyer.address, 5_000_000n);
    wallets.accounts.alpha = buyer;
    const tab = await newPage();
    // This browser's clock runs five minutes ahead: the payment's window must come from the service.
    await tab.addInitScript(() => {
      const real = Date.now.bind(Date);
      Date.now = () => real() + 5 * 60_000;
    });
    await tab.goto(listingUrl(fixture));
    await checkout(tab).getByRole('button', { name: 'Buy with Alpha Wallet' }).dblclick();
    await checkout(tab).getByText('Version 1.0.0 for $2.00.').waitFor();
    expect(tab.url()).toBe(listingUrl(fixture));
    const download = tab.waitForEvent('download', { timeout: 60_000 });
    await checkout(tab).getByRole('button', { name: 'Pay $2.00' }).click();
    await download;
    expect(await chain.balanceOf(buyer.address)).toBe(3_000_000n);
  }, 90_000);

  // Last: it spends the buy route's budget for this address.
  it('too many requests: says how long to wait', async () => {
    const buyer = newWallet();
    await chain.fund(buyer.address, 5_000_000n);
    const tab = await atOffer(buyer, fixture);
    const pay = checkout(tab).getByRole('button', { name: 'Pay $2.00' });
    await pay.waitFor();
    for (let i = 0; i < 2_000; i++) {
      const res = await t.app.inject({
        url: `/api/r/${fixture.owner}/${fixture.slug}`,
        remoteAddress: '127.0.0.1',
      });
      if (res.statusCode === 429) break;
    }
    await pay.click();
    await alert(tab)
      .filter({ hasText: /Too many attempts\. Wait \d+ seconds and try again\./ })
      .waitFor();
    expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
  }, 60_000);
});

describe('buying in the browser on the devnet: the tab’s test wallet and the faucet', () => {
  let t: PaymentsTestApp;
  let base: string;
  let browser: Browser;
  let fixture: ListingFixture;
  const problems: string[] = [];
  const wallets: Wallets = {
    accounts: { alpha: newWallet(), beta: newWallet() },
    chains: { alpha: '0x2105', beta: '0x2105' },
    unknown: { alpha: new Set(), beta: new Set() },
    added: [],
    signed: [],
    payments: 0,
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createPaymentsApp({ env: { BASE_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    fixture = await publishListing(t, { priceMicro: 2_000_000n });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    expect(problems).toEqual([]);
  });

  it('offers only the test wallet, funds it from the faucet, and buys with it; the everyday wallets never sign', async () => {
    const context = await walletContext(browser, wallets, () => Promise.reject(new Error('no chain')));
    const page = await context.newPage();
    watchProblems(page, problems);
    await page.goto(`${base}/${fixture.owner}/${fixture.slug}`);
    const checkout = page.locator('#checkout');
    await checkout.getByRole('button', { name: 'Buy with Test wallet' }).waitFor();
    expect(await checkout.getByText('its USDC is test money with no value').isVisible()).toBe(true);
    expect(await checkout.getByText('lives in this browser tab only').isVisible()).toBe(true);
    expect(await checkout.getByRole('button', { name: 'Buy with Alpha Wallet' }).count()).toBe(0);
    await checkPageLayout(page, 'devnet-checkout-wallets');

    await checkout.getByRole('button', { name: 'Buy with Test wallet' }).click();
    await checkout.getByRole('button', { name: 'Pay $2.00' }).click();
    await checkout
      .getByRole('alert')
      .filter({ hasText: 'Your wallet holds $0.00 test USDC on this devnet and the price is $2.00' })
      .waitFor();
    await checkout.getByRole('button', { name: 'Get test USDC' }).click();
    await checkout.getByText('Added $10.00 of test USDC: the test wallet holds $10.00.').waitFor();
    // The money arriving asks for the offer again: the refusal is gone, the offer is back.
    expect(await checkout.getByRole('alert').count()).toBe(0);
    const download = page.waitForEvent('download', { timeout: 60_000 });
    await checkout.getByRole('button', { name: 'Pay $2.00' }).click();
    expect(sha256(await downloaded(await download))).toBe(fixture.zips.get('1.0.0')!.sha256);
    await checkout.getByText('on this devnet’s test chain, not on Base').waitFor();
    await checkPageLayout(page, 'devnet-checkout-paid');

    // The tab's key signed the payment: on the devnet chain, the test wallet paid.
    const key = await page.evaluate(() => sessionStorage.getItem('repo402.devnet-test-wallet'));
    const { privateKeyToAccount } = await import('viem/accounts');
    const payer = privateKeyToAccount(key as Hex).address;
    expect(await t.rail.devnet!.balanceOf(payer)).toBe(8_000_000n);
    expect(wallets.signed).toEqual([]);
    expect(wallets.payments).toBe(0);

    // The library of the same tab lists it.
    await page.goto(`${base}/library`);
    await page.getByRole('region', { name: `${fixture.owner}/${fixture.slug}` }).waitFor();
    await context.close();
  }, 120_000);
});
