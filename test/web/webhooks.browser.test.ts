import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { checkPageLayout, launchBrowser } from '../support/browser.js';
import { freePort } from '../support/process.js';

/** The creator's webhooks on the account page of /app: added with its events in words, its secret shown once, removed. */
describe('webhooks in the creator app', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let creator: RegisteredCreator;
  const problems: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { BASE_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    creator = await registerCreator(t);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('adds a webhook, shows its secret once, refuses an address on this machine in words, and removes it', async () => {
    await page.goto(`${base}/app/signin`);
    await page.getByLabel('API key').fill(creator.apiKey);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Listings' }).waitFor();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { level: 2, name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet.').waitFor();

    // An address on this machine: refused by the service, said beside the field.
    await page.getByLabel("Your server's address").fill('http://127.0.0.1:9/hooks');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByText(/loopback, private, link-local or reserved address/).waitFor();

    await page.getByLabel("Your server's address").fill('https://93.184.216.34/hooks');
    await page.getByLabel('A release failed its scan').check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByText('Keep this secret now: it is not shown again.').waitFor();
    const list = page.locator('#webhooks');
    await list.locator('code', { hasText: 'https://93.184.216.34/hooks' }).waitFor();
    expect(await list.textContent()).toContain('release.scan_failed, sale');
    const [subscription] = (
      await t.app.inject({
        url: '/api/creators/me/webhooks',
        headers: { authorization: `Bearer ${creator.apiKey}` },
      })
    ).json().subscriptions;
    expect(subscription).toMatchObject({
      url: 'https://93.184.216.34/hooks',
      events: ['release.scan_failed', 'sale'],
    });
    await checkPageLayout(page, 'account-webhooks');

    await page.getByRole('button', { name: 'Remove the webhook to https://93.184.216.34/hooks' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    expect(problems).toEqual([]);
  }, 90_000);
});
