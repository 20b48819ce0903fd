import { chmod, mkdir, unlink } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { z } from 'zod';
import { AppError, type ErrorCode, isAppError } from './errors.js';
import { bearerMatches } from './tokens.js';

/**
 * Operations one repo402 process runs for another, as `POST /ops/<name>` with JSON arguments:
 *
 * - operator commands (`repo402 invites create`, `repo402 pause`, …) must reach the running
 *   server, since the embedded database and the devnet chain live inside its process: it listens
 *   on a Unix socket in the data directory, readable only by its owner, and the CLI falls back to
 *   running the command itself when no server answers there;
 * - the git host serves the hosted repositories' operations to the stateless API processes over
 *   TCP, each request carrying a bearer token only processes with the installation's secret hold.
 *
 * A refusal the operation meant (an `AppError`: `413 repo_too_large`, say) crosses with its code
 * and details, so the caller answers its client exactly as if it had run the operation itself.
 */

/** An operation run with the process's context `C` (the app's context, or only what it needs). */
export interface Operation<C, A = unknown, R = unknown> {
  args: z.ZodType<A>;
  run(ctx: C, args: A): Promise<R>;
}

/** A table of operations of any argument type; args are checked by each one's schema before `run`. */
export type Operations<C> = Record<string, { args: z.ZodType; run(ctx: C, args: never): Promise<unknown> }>;

/** Where operations are served: a Unix socket (no credential: the file mode guards it) or TCP with a token. */
export type OperationsEndpoint = { socketPath: string } | { host: string; port: number; token: string };

/** Largest request body; operations carry names and short texts, never files. */
const MAX_BODY_BYTES = 1024 * 1024;

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, 'run', 'control.sock');
}

export interface ControlServer {
  /** `http://host:port` for a TCP endpoint; the socket's path otherwise. */
  address: string;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body: { result?: unknown; error?: string; code?: ErrorCode; details?: Record<string, unknown> };
}

async function runOperation<C>(ctx: C, operations: Operations<C>, name: string, raw: string): Promise<Reply> {
  const operation = Object.hasOwn(operations, name) ? operations[name] : undefined;
  if (!operation) return { status: 404, body: { error: `unknown operation ${name}` } };
  try {
    const parsed = operation.args.safeParse(JSON.parse(raw || '{}'));
    if (!parsed.success) return { status: 400, body: { error: parsed.error.message } };
    return { status: 200, body: { result: await operation.run(ctx, parsed.data as never) } };
  } catch (error) {
    if (isAppError(error)) {
      return {
        status: error.status,
        body: { error: error.message, code: error.code, details: error.details },
      };
    }
    return { status: 500, body: { error: error instanceof Error ? error.message : String(error) } };
  }
}

export async function startControlServer<C>(
  endpoint: OperationsEndpoint,
  ctx: C,
  operations: Operations<C>,
): Promise<ControlServer> {
  const server = http.createServer((req, res) => {
    const reply = ({ status, body }: Reply) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if ('token' in endpoint && !bearerMatches(req.headers.authorization, endpoint.token)) {
      req.resume();
      return reply({ status: 401, body: { error: 'a valid bearer token is required' } });
    }
    const name = decodeURIComponent((req.url ?? '').replace(/^\/ops\//, ''));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reply({ status: 413, body: { error: 'operation arguments too large' } });
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', async () => {
      if (req.method !== 'POST') return reply({ status: 404, body: { error: `unknown operation ${name}` } });
      reply(await runOperation(ctx, operations, name, Buffer.concat(chunks).toString('utf8')));
    });
  });
  if ('socketPath' in endpoint) {
    const { socketPath } = endpoint;
    await mkdir(path.dirname(socketPath), { recursive: true, mode: 0o700 });
    await chmod(path.dirname(socketPath), 0o700);
    if (await answers(socketPath)) throw new Error(`another repo402 process already serves ${socketPath}`);
    await unlink(socketPath).catch(() => {});
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('socketPath' in endpoint) server.listen(endpoint.socketPath, resolve);
    else server.listen(endpoint.port, endpoint.host, resolve);
  });
  let address: string;
  if ('socketPath' in endpoint) {
    await chmod(endpoint.socketPath, 0o600);
    address = endpoint.socketPath;
  } else {
    const { port } = server.address() as AddressInfo;
    address = `http://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${port}`;
  }
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export class ControlError extends Error {}

/** The error an operation's reply stands for: the `AppError` it was, or a `ControlError`. */
function replyError(status: number | undefined, body: Reply['body']): Error {
  if (body.code) return new AppError(body.code, { message: body.error, details: body.details });
  return new ControlError(body.error ?? `operation answered ${status}`);
}

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
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Reply['body'];
          if (res.statusCode === 200) resolve({ result: body.result });
          else reject(replyError(res.statusCode, body));
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

/**
 * Runs an operation on another process over TCP (the git host). Unlike the CLI's socket, there is
 * no running it here instead: a process that is down or slow is an error for the caller's request.
 */
export async function callOperation(
  target: { url: string; token: string; timeoutMs: number },
  name: string,
  args: unknown,
): Promise<unknown> {
  const res = await fetch(`${target.url}/ops/${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
    body: JSON.stringify(args ?? {}),
    signal: AbortSignal.timeout(target.timeoutMs),
  });
  const body = (await res.json().catch(() => ({}))) as Reply['body'];
  if (res.status === 200) return body.result;
  throw replyError(res.status, body);
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
