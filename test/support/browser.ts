import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect, it } from 'vitest';

/** Debian's Chromium, installed by .ci/run; playwright-core never downloads a browser of its own. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The machine's network is closed: without these flags Chromium keeps trying to reach Google. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * Chromium with a profile of its own, as a person's browser runs: unlike the private contexts
 * `launchBrowser` gives, it acts on hints such as `<link rel="preconnect">`. Closing it removes
 * the profile.
 */
export async function launchProfileBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'repo402-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(await AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: typeof import('axe-core') }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

/** Where the browser tests keep their screenshots, to be looked at. */
export const SCREENSHOTS = path.join(os.tmpdir(), 'repo402-screenshots');
const WIDTHS = [1280, 375] as const;

/**
 * The page as it is now at a desktop's and a phone's width: a full-page screenshot first (kept for
 * looking at), then no horizontal overflow and no serious or critical axe-core violation.
 */
export async function checkPageLayout(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(50);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `${name} overflows at ${width}px`).toBeLessThanOrEqual(0);
    expect(await seriousAxeViolations(page), `${name} at ${width}px`).toEqual([]);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/**
 * The steps of one journey through a browser, each a test: once a step fails, the later ones (which
 * build on it) are skipped, and what the page showed is kept as `<failureShot>.png` beside the
 * other screenshots.
 */
export function journeySteps(page: () => Page | undefined, failureShot: string, defaultTimeout: number) {
  let broken = false;
  return (name: string, run: () => Promise<void>, timeout = defaultTimeout) =>
    it(
      name,
      async (ctx) => {
        if (broken) ctx.skip();
        try {
          await run();
        } catch (error) {
          broken = true;
          await page()
            ?.screenshot({ path: path.join(SCREENSHOTS, `${failureShot}.png`), fullPage: true })
            .catch(() => {});
          throw error;
        }
      },
      timeout,
    );
}
