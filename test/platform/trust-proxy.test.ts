import http from 'node:http';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { trustProxyOption } from '../../src/platform/http/trust-proxy.js';
import { createTestApp, type TestApp } from '../support/app.js';

/**
 * Which address the rate limits count for each form of TRUST_PROXY, as docs/CONFIGURATION.md
 * states it (the `TRUST_PROXY` row, from src/config.ts): over real connections from two loopback
 * addresses, one of them the proxy in front. What a request was counted as shows in its
 * `x-ratelimit-remaining`: each client address has its own budget.
 */

/** The proxy in front (any 127.x address is this machine; a connection can come from each). */
const PROXY = '127.0.0.1';
/** A client reaching the port directly. */
const ELSEWHERE = '127.0.0.2';
const BUDGET = 100;
const TRUSTED = '10.0.0.0/8,127.0.0.1';

/** One request: the address it connects from, the X-Forwarded-For it carries, and the client it counts as. */
type Step = [from: string, forwardedFor: string | undefined, countedAs: string];

const FORMS: { form: string; env: Record<string, string>; steps: Step[] }[] = [
  {
    form: 'unset: the peer, X-Forwarded-For ignored',
    env: {},
    steps: [
      [PROXY, '198.51.100.1', PROXY],
      [PROXY, '198.51.100.2', PROXY],
      [ELSEWHERE, '198.51.100.1', ELSEWHERE],
      [ELSEWHERE, undefined, ELSEWHERE],
    ],
  },
  {
    form: 'false: as unset',
    env: { TRUST_PROXY: 'false' },
    steps: [
      [PROXY, '198.51.100.1', PROXY],
      [ELSEWHERE, '198.51.100.1', ELSEWHERE],
    ],
  },
  {
    form: `a list (${TRUSTED}): from a listed peer, the rightmost entry not listed; from any other peer, that peer`,
    env: { TRUST_PROXY: TRUSTED },
    steps: [
      // The proxy appended the client it saw.
      [PROXY, '198.51.100.1', '198.51.100.1'],
      // The client wrote an entry of its own first: the proxy's entry is the one counted.
      [PROXY, '203.0.113.9, 198.51.100.1', '198.51.100.1'],
      // Through a second listed proxy (10.1.2.3): the entry before it.
      [PROXY, '198.51.100.2, 10.1.2.3', '198.51.100.2'],
      // Every entry a listed proxy: the leftmost.
      [PROXY, '10.1.1.1, 10.2.2.2', '10.1.1.1'],
      // Without the header, the proxy itself.
      [PROXY, undefined, PROXY],
      // A client reaching the port directly is counted as itself, whatever it forwards.
      [ELSEWHERE, '198.51.100.1', ELSEWHERE],
      [ELSEWHERE, '198.51.100.3', ELSEWHERE],
      // An IPv6 client by its /64, as a direct one is (src/platform/limits/peer-key.ts).
      [PROXY, '2001:db8:1:2::5', '2001:db8:1:2::/64'],
      [PROXY, '2001:db8:1:2:ffff::6', '2001:db8:1:2::/64'],
    ],
  },
  {
    form: 'true: the leftmost entry, from any peer; the peer without the header',
    env: { TRUST_PROXY: 'true' },
    steps: [
      [PROXY, '203.0.113.9, 198.51.100.1', '203.0.113.9'],
      [PROXY, '198.51.100.1', '198.51.100.1'],
      // A client reaching the port directly chooses what it is counted as.
      [ELSEWHERE, '203.0.113.9', '203.0.113.9'],
      [ELSEWHERE, undefined, ELSEWHERE],
    ],
  },
];

/** A GET of a public route over a new connection from `from`; resolves with the answer's headers. */
function get(
  base: string,
  from: string,
  forwardedFor: string | undefined,
): Promise<http.IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      new URL('/.well-known/x402', base),
      {
        localAddress: from,
        agent: false,
        headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(response.headers)
            : reject(new Error(`answered ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
  });
}

describe.each(FORMS)('TRUST_PROXY $form', ({ env, steps }) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('counts each request against the documented client', async () => {
    t = await createTestApp({ env: { ...env, RATE_LIMIT_PUBLIC: `${BUDGET}/60` } });
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const counted = new Map<string, number>();
    for (const [from, forwardedFor, countedAs] of steps) {
      const headers = await get(base, from, forwardedFor);
      counted.set(countedAs, (counted.get(countedAs) ?? 0) + 1);
      expect(
        Number(headers['x-ratelimit-remaining']),
        `from ${from}, X-Forwarded-For ${forwardedFor}: counted as ${countedAs}`,
      ).toBe(BUDGET - counted.get(countedAs)!);
    }
  });
});

describe('TRUST_PROXY=true', () => {
  it('is warned about at start: every X-Forwarded-For entry is believed, so a client picks its own key', async () => {
    const lines: string[] = [];
    const t = await createTestApp({
      env: { TRUST_PROXY: 'true', LOG_LEVEL: 'info' },
      logDestination: { write: (line: string) => lines.push(line) },
    });
    try {
      const warning = lines.find((line) => line.includes('TRUST_PROXY=true'));
      expect(JSON.parse(warning!)).toMatchObject({ level: 40 });
    } finally {
      await t.close();
    }
  });
});

describe('trustProxyOption', () => {
  // Fastify's own decision for a list, which the remembered one must repeat.
  const fastifyTrust = createRequire(createRequire(import.meta.url).resolve('fastify'))('@fastify/proxy-addr')
    .compile as (list: string[]) => (address: string, hop: number) => boolean;

  it('passes true and false through, as Fastify takes them', () => {
    expect(trustProxyOption(true)).toBe(true);
    expect(trustProxyOption(false)).toBe(false);
  });

  it('decides every address as Fastify does, the first time and when remembered, also past its memory', () => {
    const setting = '10.0.0.0/8, 192.168.1.1, loopback, 2001:db8::/32, 172.16.0.0/255.240.0.0';
    const trust = trustProxyOption(setting) as (address: string, hop: number) => boolean;
    const fastify = fastifyTrust(setting.split(',').map((entry) => entry.trim()));
    const addresses = [
      '10.1.2.3',
      '11.1.2.3',
      '192.168.1.1',
      '192.168.1.2',
      '127.0.0.1',
      '127.9.9.9',
      '::1',
      '::ffff:10.1.2.3',
      '::ffff:11.1.2.3',
      '::ffff:7f00:1',
      '2001:db8:5::1',
      '2001:db9::1',
      '172.20.0.1',
      '172.32.0.1',
      'fe80::1%eth0',
      'not an address',
      '',
      '1.2.3.4:80',
      `${'1'.repeat(80)}`,
    ];
    // Twice over, and again after 2,000 other addresses have overflowed what it remembers.
    const filler = Array.from({ length: 2000 }, (_, i) => `198.51.${i >> 8}.${i & 255}`);
    for (const address of [...addresses, ...addresses, ...filler, ...addresses]) {
      expect(trust(address, 0), address).toBe(fastify(address, 0));
    }
  });
});
