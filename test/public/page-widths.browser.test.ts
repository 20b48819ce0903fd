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
const WIDTHS = [1280, 375];

/** How far the page scrolls sideways, in CSS pixels: 0 when it fits. */
const sidewaysScroll = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * Every public page fits a phone (375 px) with no sideways page scroll, and keeps its desktop
 * layout at 1280 px; a wide table or code block scrolls inside its own box, which says so and is
 * reachable by keyboard. axe-core finds nothing serious on any of them.
 */
describe('the public pages at desktop and phone widths', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let pages: Array<[name: string, url: string, status: number]>;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    await mkdir(SCREENSHOTS, { recursive: true });
    const readme = [
      '# Release notes tool',
      '',
      'Turns a range of commits into release notes.',
      '',
      '```sh',
      `release-notes --from v1.0.0 --to v2.0.0 --format markdown --output CHANGELOG.md --include-authors --group-by-component ${'--verbose '.repeat(4)}`,
      '```',
      '',
      '| option | meaning | default |',
      '| --- | --- | --- |',
      '| `--group-by-component` | one section per component touched, named from the paths | off |',
      '',
    ].join('\n');
    const f = await publishedListingFixture(t, {
      slug: 'release-notes-from-commit-ranges',
      priceMicro: 12_500_000n,
      updatePriceMicro: 2_000_000n,
      description: `${'Generates release notes and changelogs from commit ranges, grouped by component, with authors and links. '.repeat(4)}See https://example.com/a/very/long/address/that/has/no/spaces/in/it/whatsoever/and/keeps/going/on/and/on`,
      releases: [
        { version: '1.0.0', files: { 'README.md': readme } },
        { version: '1.1.0', verdict: 'fail' },
        { version: '1.2.0', computed: PAGE_COMPUTED, scan: PAGE_SCAN },
        { version: '2.0.0', verdict: 'fail' },
        { version: '2.1.0', files: { 'README.md': readme, 'src/index.ts': 'export const notes = 1;\n' } },
      ],
    });
    pages = [
      ['home', '/', 200],
      ['manifest', `/${f.owner}/${f.slug}`, 200],
      ['buying', '/docs/buying', 200],
      ['selling', '/docs/selling', 200],
      ['errors', '/docs/errors', 200],
      ['terms', '/docs/terms', 200],
      ['not-a-listing', '/nobody-here/no-such-tool', 404],
      ['no-such-page', '/docs/no-such-guide', 404],
    ];
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of WIDTHS) {
    it(`fits every page in ${width} px, with no serious accessibility violation`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
      });
      for (const [name, url, status] of pages) {
        const response = await page.goto(`${base}${url}`);
        expect(response?.status(), url).toBe(status);
        expect(response?.headers()['content-type'], url).toBe('text/html; charset=utf-8');
        await page.screenshot({
          path: path.join(SCREENSHOTS, `public-${name}-${width}.png`),
          fullPage: true,
        });
        expect(await sidewaysScroll(page), `${url} at ${width} px`).toBeLessThanOrEqual(0);
        expect(await seriousAxeViolations(page), `${url} at ${width} px`).toEqual([]);
      }
      expect(blocked).toEqual([]);
      await page.close();
    });
  }

  it('reflows the release log on a phone, one block per release, every one listed', async () => {
    const page = await browser.newPage({ viewport: { width: 375, height: 900 } });
    await page.goto(`${base}${pages[1]![1]}`);
    const rows = page.locator('#releases tbody tr');
    // Every release is listed, passing and failing.
    expect(await rows.count()).toBe(5);
    expect(await rows.locator('.badge.bad').count()).toBe(2);
    const right = await rows.evaluateAll((trs) =>
      Math.max(...trs.map((tr) => tr.getBoundingClientRect().right)),
    );
    expect(right).toBeLessThanOrEqual(375);
    // The column names stay for screen readers; on screen a cell says what it is.
    expect(await page.locator('#releases thead th').count()).toBe(5);
    expect(await rows.first().locator('td[data-label="Published"]').isVisible()).toBe(true);
    // At 1280 it is the table it always was, in one row per release.
    await page.setViewportSize({ width: 1280, height: 900 });
    const heights = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
    expect(Math.max(...heights)).toBeLessThan(60);
    await page.close();
  });

  it('scrolls a table wider than a phone inside its own box, which shows it and takes keyboard focus', async () => {
    const page = await browser.newPage({ viewport: { width: 375, height: 900 } });
    await page.goto(`${base}/docs/buying`);
    const box = page.locator('.table-scroll').filter({ hasText: 'settlement_pending' });
    expect(await box.getAttribute('tabindex')).toBe('0');
    expect(await box.getAttribute('aria-label')).toBe('Table: Answer, Why, What to do');
    const { scrollWidth, clientWidth } = await box.evaluate((el) => ({
      scrollWidth: el.scrollWidth,
      clientWidth: el.clientWidth,
    }));
    expect(scrollWidth).toBeGreaterThan(clientWidth);
    // The cue: shadows at the clipped edges, drawn by the box's background.
    expect(await box.evaluate((el) => getComputedStyle(el).backgroundImage)).toContain('radial-gradient');
    await box.focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => box.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
    // The favicon the page links is served.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect((await page.request.get(`${base}${icon}`)).status()).toBe(200);
    await page.close();
  });
});
