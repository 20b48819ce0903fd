import { chmod, mkdir, unlink } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { z } from 'zod';
import type { AppContext } from '../context.js';

/**
 * Operator commands (`repo402 invites create`, `repo402 pause`, …) must reach the running server:
 * the embedded database and the devnet chain live inside its process. The server listens on a
 * Unix socket in the data directory, readable only by its owner; the CLI sends the command there
 * and falls back to running it in-process when no server answers.
 */

export interface Operation<A = unknown, R = unknown> {
  args: z.ZodType<A>;
  run(ctx: AppContext, args: A): Promise<R>;
}

/** A table of operations of any argument type; args are checked by each one's schema before `run`. */
export type Operations = Record<
  string,
  { args: z.ZodType; run(ctx: AppContext, args: never): Promise<unknown> }
>;

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'run', 'control.sock');
}

export interface ControlServer {
  close(): Promise<void>;
}

export async function startControlServer(
  socketPath: string,
  ctx: AppContext,
  operations: Operations,
): Promise<ControlServer> {
  await mkdir(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  await chmod(path.dirname(socketPath), 0o700);
  if (await answers(socketPath)) throw new Error(`another repo402 process already serves ${socketPath}`);
  await unlink(socketPath).catch(() => {});

  const server = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '').replace(/^\/ops\//, ''));
    const operation = Object.hasOwn(operations, name) ? operations[name] : undefined;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || !operation) return reply(404, { error: `unknown operation ${name}` });
      try {
        const parsed = operation.args.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
        if (!parsed.success) return reply(400, { error: parsed.error.message });
        reply(200, { result: await operation.run(ctx, parsed.data as never) });
      } catch (error) {
        reply(500, { error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  await chmod(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export class ControlError extends Error {}

/** Sends an operation to the running server; `undefined` when none listens on the socket. */
export async function callControl(
  socketPath: string,
  name: string,
  args: unknown,
): Promise<{ result: unknown } | undefined> {
  const payload = JSON.stringify(args ?? {});
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath,
        path: `/ops/${encodeURIComponent(name)}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
            result?: unknown;
            error?: string;
          };
          if (res.statusCode === 200) resolve({ result: body.result });
          else reject(new ControlError(body.error ?? `control socket answered ${res.statusCode}`));
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolve(undefined);
      else reject(error);
    });
    req.end(payload);
  });
}

async function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request({ socketPath, path: '/ops/ping', method: 'POST' }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}
