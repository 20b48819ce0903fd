import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cutJob } from '../../src/releases/jobs.js';
import { type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createPaymentsApp, type PaymentsTestApp } from '../purchases/support.js';
import { checkPageLayout, launchBrowser } from '../support/browser.js';
import { type GitHubStandIn, startGitHubStandIn } from '../support/github/index.js';
import { freePort } from '../support/process.js';

/**
 * A GitHub-backed listing made in the web app, against the GitHub stand-in (a real HTTP server
 * speaking GitHub's REST API, git over HTTP and signed webhooks): the App's install link, the
 * `.repo402` claim explained and then found, the repository chosen from the list the API gives, the
 * listing created, and a tag's webhook cutting a release that appears by itself. A server without
 * the App says so in words.
 */
describe('a GitHub-backed listing, created in the web app', () => {
  let gh: GitHubStandIn;
  let t: PaymentsTestApp;
  let plain: PaymentsTestApp;
  let base: string;
  let plainBase: string;
  let browser: Browser;
  let page: Page;
  let creator: RegisteredCreator;
  let installationId: number;
  const problems: string[] = [];

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    const [port, plainPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    plainBase = `http://127.0.0.1:${plainPort}`;
    t = await createPaymentsApp({
      jobs: [cutJob],
      env: {
        BASE_URL: base,
        GITHUB_APP_ID: String(gh.appId),
        GITHUB_APP_PRIVATE_KEY: gh.privateKeyPem,
        GITHUB_WEBHOOK_SECRET: gh.webhookSecret,
        GITHUB_API_URL: gh.apiUrl,
        GITHUB_GIT_ALLOW_HTTP: 'true',
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    plain = await createPaymentsApp({ env: { BASE_URL: plainBase } });
    await plain.app.listen({ port: plainPort, host: '127.0.0.1' });
    creator = await registerCreator(t);
    installationId = gh.createInstallation({ account: { login: 'acme', type: 'Organization' } }).id;
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await plain?.close();
    await gh?.close();
  });

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

  async function signIn(at: string, apiKey: string) {
    await page.goto(`${at}/app/signin`);
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Sign in with key' }).click();
    await heading('Listings').waitFor();
  }

  const checkPage = (name: string) => checkPageLayout(page, name);

  it('says plainly when the operator has not enabled GitHub listings', async () => {
    const other = await registerCreator(plain);
    await signIn(plainBase, other.apiKey);
    await page.getByRole('link', { name: 'New listing' }).click();
    await heading('New listing').waitFor();
    await page.getByRole('radio', { name: /private GitHub repository/ }).check();
    await page.getByText('The operator of this service has not enabled GitHub listings').waitFor();
    await checkPage('listing-new-github-disabled');
  }, 60_000);

  it('explains the claim, finds the claimed repository, creates the listing and shows its first release', async () => {
    const repo = await gh.createRepo({ owner: 'acme', name: 'Release-Notes', installationId });
    await gh.pushTag(repo, {
      tag: 'start',
      files: { 'README.md': '# Release notes\n\nTurns commits into release notes.\n' },
    });
    await signIn(base, creator.apiKey);
    await page.getByRole('link', { name: 'New listing' }).click();
    await heading('New listing').waitFor();
    await page.getByRole('radio', { name: /private GitHub repository/ }).check();

    // Nothing claims the creator yet: the page says what to commit, with their handle.
    await page.getByText(`No repository that the App can read claims ${creator.handle} yet`).waitFor();
    const install = page.getByRole('link', { name: 'Install the repo402 GitHub App' });
    expect(await install.getAttribute('href')).toMatch(/\/installations\/new$/);
    const claim = await page.getByText(/^printf /).textContent();
    expect(claim).toContain(`printf '%s\\n' ${creator.handle} > .repo402`);
    // Choosing nothing is refused beside the list, with focus on it.
    await page.getByRole('button', { name: 'Create listing' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('github-repo');
    await page.locator('#github-repo-error').getByText('Choose the repository to sell.').waitFor();
    await checkPage('listing-new-github-unclaimed');

    // The creator commits the claim on GitHub, then asks the page to look again.
    await gh.pushTag(repo, {
      tag: 'claim',
      files: {
        'README.md': '# Release notes\n\nTurns commits into release notes.\n',
        '.repo402': `${creator.handle}\n`,
      },
    });
    await page.getByRole('button', { name: 'Check again' }).click();
    const choice = page.getByRole('radio', { name: 'acme/Release-Notes' });
    await choice.check();
    // The repository's name becomes the listing's name, in the form a URL takes.
    expect(await page.getByLabel('Name').inputValue()).toBe('release-notes');
    // Filled in for them, the name is no longer marked wrong, nor is the choice.
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBeNull();
    expect(await page.locator('#github-repo-error').count()).toBe(0);
    await checkPage('listing-new-github');
    await page.getByRole('button', { name: 'Create listing' }).click();
    await heading(`${creator.handle}/release-notes`).waitFor();
    await page.getByText('acme/Release-Notes').first().waitFor();

    // A tag pushed on GitHub arrives by webhook and shows up on the page by itself.
    await gh.pushTag(repo, {
      tag: 'v1.0.0',
      files: {
        'README.md': '# Release notes\n\nTurns commits into release notes.\n',
        '.repo402': `${creator.handle}\n`,
        'src/notes.js': 'export const notes = (log) => log.map((c) => "- " + c);\n',
      },
      webhookUrl: `${base}/api/github/webhooks`,
    });
    const release = page
      .getByRole('list', { name: 'Releases' })
      .getByRole('listitem')
      .filter({ hasText: 'v1.0.0' });
    await release.getByText('pass', { exact: true }).first().waitFor({ timeout: 90_000 });
    await checkPage('listing-github');

    // Listed once: the repository now says so on the new-listing page.
    await page.goto(`${base}/app/listings/new`);
    await page.getByRole('radio', { name: /private GitHub repository/ }).check();
    await page.getByText('already one of your listings').waitFor();
    expect(await page.getByRole('radio', { name: /acme\/Release-Notes/ }).isDisabled()).toBe(true);
    expect(problems).toEqual([]);
  }, 180_000);
});
