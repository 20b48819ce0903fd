import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: Record<string, string>;
  body: string;
  /** What `standardwebhooks` verified with the subscription's secret; undefined when it refused. */
  verified?: { type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A webhook receiver: a real HTTP server on 127.0.0.1 that answers each POST with the next status
 * of `statuses` (the last one repeats) and verifies each message with the `standardwebhooks`
 * package, once its secret is known (`receiver.secret = …` after subscribing).
 */
export async function startReceiver(statuses: number[] = [204]) {
  const received: Received[] = [];
  const state = { secret: undefined as string | undefined };
  let calls = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      );
      let verified: Received['verified'];
      try {
        verified = state.secret
          ? (new Webhook(state.secret).verify(body, headers) as Received['verified'])
          : undefined;
      } catch {
        verified = undefined;
      }
      received.push({ headers, body, verified });
      response.statusCode = statuses[Math.min(calls, statuses.length - 1)]!;
      calls++;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    set secret(value: string) {
      state.secret = value;
    },
    /** The verified messages of one event type. */
    events(type: string) {
      return received.flatMap((message) => (message.verified?.type === type ? [message.verified] : []));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
