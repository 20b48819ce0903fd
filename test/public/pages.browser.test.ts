import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { launchBrowser, seriousAxeViolations } from '../support/browser.js';
import { PAGE_COMPUTED, PAGE_SCAN, publishedListingFixture } from '../support/listings.js';

const SCREENSHOTS = path.join(os.tmpdir(), 'repo402-screenshots');

describe('pages in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of [1280, 375]) {
    it(`renders the home page and the docs without horizontal overflow at ${width}px`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      for (const url of ['/', '/docs', '/docs/errors', '/docs/terms']) {
        const response = await page.goto(`${base}${url}`);
        expect(response?.status(), url).toBe(200);
        expect(await page.locator('h1').first().textContent(), url).toBeTruthy();
        // The stylesheet loaded: the header is styled, not default-block.
        expect(
          await page.locator('.site-header').evaluate((el) => getComputedStyle(el).borderBottomStyle),
        ).toBe('solid');
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${url} at ${width}px`).toBeLessThanOrEqual(0);
        await page.screenshot({
          path: path.join(SCREENSHOTS, `${url.replace(/\W+/g, '_') || 'home'}-${width}.png`),
          fullPage: true,
        });
      }
      await page.close();
    });
  }

  it("finds a listing with the home page's search form, without any script, and opens its page", async () => {
    const f = await publishedListingFixture(t, {
      priceMicro: 4_250_000n,
      description:
        'Searchable widget <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">',
    });
    const entry = (page: Page) => page.locator(`[data-listing="${f.owner}/${f.slug}"]`).first();
    // The guides and the search work for a reader whose browser runs no script at all.
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByRole('link', { name: 'How to buy' }).first().waitFor();
    await page.getByRole('link', { name: 'How to sell' }).first().waitFor();
    await page.getByRole('searchbox', { name: 'Search listings' }).fill('searchable WIDGET');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(`${base}/?q=searchable+WIDGET`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Listings matching “searchable WIDGET”',
    );
    expect(await entry(page).locator('.price').textContent()).toBe('$4.25');
    expect(await entry(page).locator('.badge').textContent()).toBe('pass');
    // The markup in the description is text on the page, not elements.
    expect(await entry(page).locator('.listing-description').textContent()).toContain('<script>');
    expect(await entry(page).locator('script, img').count()).toBe(0);
    // Each listing leads to its checkout too.
    expect(
      await entry(page)
        .getByRole('link', { name: `Buy ${f.owner}/${f.slug}` })
        .getAttribute('href'),
    ).toBe(`/${f.owner}/${f.slug}#buy`);
    await entry(page)
      .getByRole('link', { name: `${f.owner}/${f.slug}`, exact: true })
      .click();
    await page.waitForURL(`${base}/${f.owner}/${f.slug}`);
    expect(await page.locator('h1').first().textContent()).toBe(f.slug);
    await context.close();

    // With script on: nothing from the listing runs, and both views pass axe at both widths.
    const scripted = await browser.newPage();
    const messages: string[] = [];
    scripted.on('console', (message) => messages.push(message.text()));
    for (const [name, url] of [
      ['home', '/'],
      ['search', '/?q=searchable'],
    ] as const) {
      await scripted.goto(`${base}${url}`);
      await entry(scripted).waitFor();
      for (const width of [1280, 375]) {
        await scripted.setViewportSize({ width, height: 900 });
        await scripted.screenshot({
          path: path.join(SCREENSHOTS, `${name}-listings-${width}.png`),
          fullPage: true,
        });
        const overflow = await scripted.evaluate(
          () => document.documentElement.scrollWidth - window.innerWidth,
        );
        expect(overflow, `${url} at ${width}px`).toBeLessThanOrEqual(0);
        expect(await seriousAxeViolations(scripted), `${url} at ${width}px`).toEqual([]);
      }
    }
    expect(
      await scripted.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
    ).toBeUndefined();
    expect(messages.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);
    await scripted.close();
  });

  it('follows an error anchor from docs_url to its section', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs/errors#price_changed`);
    expect(await page.locator('#price_changed h3').textContent()).toContain('price_changed');
    expect(await page.locator('#price_changed').evaluate((el) => el.matches(':target'))).toBe(true);
    await page.close();
  });

  for (const width of [1280, 375]) {
    it(`renders a manifest page readably at ${width}px`, async () => {
      const f = await publishedListingFixture(t, {
        priceMicro: 9_000_000n,
        description: 'Generates changelogs from commits',
        releases: [{ version: '2.1.0', computed: PAGE_COMPUTED, scan: PAGE_SCAN }],
      });
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const messages: string[] = [];
      page.on('console', (message) => messages.push(message.text()));
      const response = await page.goto(`${base}/${f.owner}/${f.slug}`);
      expect(response?.status()).toBe(200);
      expect(await page.locator('h1').first().textContent()).toBe(f.slug);
      expect(await page.locator('#description').textContent()).toContain('Generates changelogs');
      expect(await page.locator('#price .big').textContent()).toBe('$9.00');
      expect(await page.locator('#version .big').textContent()).toBe('2.1.0');
      expect(await page.locator('#scan .badge').textContent()).toBe('pass');
      expect(await page.locator('#readme h1').textContent()).toBe('Fixture tool');
      expect(await page.locator('#tree tr').count()).toBe(3);
      // HTTP, MCP, verifying the download, the skill.
      expect(await page.locator('#buy ol > li').count()).toBe(4);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      // The CSP blocks nothing the page itself needs (its stylesheet).
      expect(messages.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);
      await page.screenshot({ path: path.join(SCREENSHOTS, `manifest-${width}.png`), fullPage: true });
      await page.close();
    });
  }

  it('renders a hostile README inert: no script runs, no javascript: link, no raw HTML elements', async () => {
    const f = await publishedListingFixture(t, {
      releases: [
        {
          version: '1.0.0',
          files: {
            'README.md': [
              '# Hostile',
              '<script>window.__pwned = 1; alert(1)</script>',
              '[click me](javascript:window.__pwned=2)',
              '<img src="x" onerror="window.__pwned=3">',
              '<a href="javascript:window.__pwned=4">raw link</a>',
              '<iframe src="https://example.com"></iframe>',
              '![logo](javascript:window.__pwned=5)',
              '',
            ].join('\n\n'),
          },
        },
      ],
    });
    const page = await browser.newPage();
    let dialogs = 0;
    page.on('dialog', async (dialog) => {
      dialogs++;
      await dialog.dismiss();
    });
    const response = await page.goto(`${base}/${f.owner}/${f.slug}`);
    expect(response?.status()).toBe(200);
    await page.waitForTimeout(300);
    const readme = page.locator('#readme');
    expect(await readme.locator('h1').textContent()).toBe('Hostile');
    expect(await readme.locator('script, iframe, img[onerror], [onerror]').count()).toBe(0);
    const hrefs = await readme
      .locator('a')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    expect(hrefs.filter((href) => /^\s*javascript:/i.test(href))).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toBe(0);
    await page.close();
  });
});
