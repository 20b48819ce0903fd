import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { launchBrowser } from '../support/browser.js';

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

  it('follows an error anchor from docs_url to its section', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs/errors#price_changed`);
    expect(await page.locator('#price_changed h3').textContent()).toContain('price_changed');
    expect(await page.locator('#price_changed').evaluate((el) => el.matches(':target'))).toBe(true);
    await page.close();
  });
});
