import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServerProcess } from './support/process.js';

describe('graceful shutdown on SIGTERM', { timeout: 120_000 }, () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-shutdown-'));
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('lets an in-flight request finish, exits 0 and leaves the database reopenable', async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });

    // A request whose body is still arriving is in flight when the signal comes.
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = '{"status":"pending"}';
    socket.write(
      `POST /api/health HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    const response = new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
      });
      socket.on('close', () => resolve(data));
    });
    await new Promise((resolve) => setTimeout(resolve, 200));

    const exited = server.stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.child.exitCode).toBeNull();
    socket.write(body.slice(5));

    const answer = await response;
    expect(answer).toMatch(/^HTTP\/1\.1 404/);
    expect(answer).toContain('"code":"not_found"');
    const code = await exited;
    expect(code, server.logs()).toBe(0);
    expect(server.logs()).toContain('shutting down');

    // The PGlite lock was released and the data is intact: a new process starts on it at once.
    const again = await startServerProcess({ DATA_DIR: dataDir });
    const health = await (await fetch(`${again.url}/api/health`)).json();
    expect(health.status).toBe('ok');
    expect(await again.stop()).toBe(0);
  });
});
