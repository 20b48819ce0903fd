import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { launchProfileBrowser } from '../support/browser.js';

describe('a browser’s spare connection left idle past the headers timeout', () => {
  let t: TestApp;
  let browser: Awaited<ReturnType<typeof launchProfileBrowser>>;
  let port: number;
  /** Every connection the server accepted, and whether a request arrived on it. */
  const sockets = new Map<Socket, { used: boolean }>();

  beforeAll(async () => {
    t = await createTestApp({
      env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '2' },
      extend: (app) => {
        // A page that asks the browser to open a connection to another origin (the same server
        // under its other name) ahead of any request to it, as pages and browsers do.
        app.get('/test/preconnect', async (_request, reply) =>
          reply
            .type('text/html')
            .send(
              `<!doctype html><title>t</title><link rel="preconnect" href="http://localhost:${port}"><p>ready</p>`,
            ),
        );
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    t.app.server.on('connection', (socket: Socket) => sockets.set(socket, { used: false }));
    t.app.server.on('request', (request) => {
      const entry = sockets.get(request.socket);
      if (entry) entry.used = true;
    });
    browser = await launchProfileBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('is closed without an answer, and the page the person opens next loads', async () => {
    const page = await browser.context.newPage();
    await page.goto(`http://127.0.0.1:${port}/test/preconnect`);
    const spare = await waitFor(() => [...sockets].find(([, { used }]) => !used)?.[0]);

    // 1 s of headers timeout, checked every second by Node: closed within about 2 s, sending nothing.
    await waitFor(() => (spare.destroyed ? true : undefined), 5000);
    expect(spare.bytesWritten, 'an answer was written to a connection that carried no request').toBe(0);

    const response = await page.goto(`http://localhost:${port}/`);
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').first().textContent()).toBeTruthy();
    await page.close();
  });
});

async function waitFor<T>(check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
