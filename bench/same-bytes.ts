import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRequest } from './routes.js';

/** A response exactly as repo402 sent it, for the bare server to send again. */
export interface CapturedResponse {
  method: string;
  path: string;
  status: number;
  /** As sent (original case, repeated names grouped), less those that belong to one connection or moment. */
  headers: Record<string, string | string[]>;
  /** Base64 of the body bytes. */
  body: string;
}

/** Per connection or per moment: the bare server's HTTP stack writes its own. */
const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** Sends `request` to `base` over plain node:http (no decoding of any kind) and keeps the answer's bytes. */
export function capture(base: string, request: BenchRequest): Promise<CapturedResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(request.path, base),
      { method: request.method, headers: request.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const headers: Record<string, string | string[]> = {};
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i]!;
            const value = res.rawHeaders[i + 1]!;
            if (NOT_REPLAYED.has(name.toLowerCase())) continue;
            const held = headers[name];
            headers[name] = held === undefined ? value : [held, value].flat();
          }
          resolve({
            method: request.method,
            path: request.path,
            status: res.statusCode!,
            headers,
            body: Buffer.concat(chunks).toString('base64'),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

export interface BareServer {
  url: string;
  stop(): Promise<void>;
}

const BARE_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bare-server.ts');

/** Starts bench/bare-server.ts in a process of its own, serving `responses`; resolves with its URL. */
export async function startBareServer(responses: CapturedResponse[]): Promise<BareServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-bench-bare-'));
  const file = path.join(dir, 'responses.json');
  await writeFile(file, JSON.stringify(responses));
  const child = spawn(process.execPath, ['--import', 'tsx', BARE_SERVER, file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (chunk) => {
        buffer += chunk;
        if (buffer.includes('\n')) resolve(buffer.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`the bare server exited with ${code}`)));
    });
    return {
      url,
      stop: async () => {
        child.kill('SIGTERM');
        await exited;
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
