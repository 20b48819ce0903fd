import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TERMS_VERSION } from '../../src/identity/terms.js';
import { newWallet } from '../identity/support.js';
import { type SshKey, sshKeygen } from '../listings/support.js';
import { gitOverSsh } from '../releases/support.js';
import { freePort, runCli, type ServerProcess, startServerProcess } from '../support/process.js';

const exec = promisify(execFile);

/** The flood: 20 source addresses (all this machine's loopback) × 100 connections each. */
const SOURCES = Array.from({ length: 20 }, (_, i) => `127.0.3.${i + 1}`);
const PER_SOURCE = 100;
/** The server's own limit on open files for this test: the 20,000 connections against 20,000 files, scaled down. */
const SERVER_FILE_LIMIT = 1024;

interface FloodConnection {
  socket: net.Socket;
  /** The server sent its SSH identification: it admitted this connection. */
  admitted: boolean;
  openedAt: number;
  closedAt?: number;
}

/** Opens idle connections in batches (the listen backlog is finite); half send only an SSH banner, half nothing. */
async function openFlood(port: number): Promise<FloodConnection[]> {
  const all: FloodConnection[] = [];
  for (let round = 0; round < PER_SOURCE; round += 5) {
    const batch = SOURCES.flatMap((localAddress) =>
      Array.from({ length: 5 }, (_, i) => {
        const conn: FloodConnection = {
          socket: net.connect({ port, host: '127.0.0.1', localAddress }),
          admitted: false,
          openedAt: Date.now(),
        };
        conn.socket.on('data', () => {
          conn.admitted = true;
        });
        conn.socket.on('error', () => {});
        conn.socket.on('close', () => {
          conn.closedAt = Date.now();
        });
        if ((round + i) % 2 === 0) conn.socket.write('SSH-2.0-flood\r\n');
        all.push(conn);
        return new Promise<void>((resolve) => {
          conn.socket.once('connect', () => resolve());
          conn.socket.once('close', () => resolve());
          // A server that stopped accepting leaves SYNs unanswered; the flood goes on regardless.
          setTimeout(resolve, 3000);
        });
      }),
    );
    await Promise.all(batch);
  }
  return all;
}

async function post(base: string, url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json;
}

/** A creator and a hosted listing made over the running server's own HTTP API and control socket. */
async function hostedListing(server: ServerProcess, dataDir: string, key: SshKey) {
  const invite = await runCli(['invites', 'create'], { DATA_DIR: dataDir });
  expect(invite.code, invite.stderr).toBe(0);
  const wallet = newWallet();
  const challenge = await (
    await fetch(`${server.url}/api/auth/challenge?address=${wallet.address}&purpose=address_proof`)
  ).json();
  const creator = await post(server.url, '/api/creators', {
    handle: `flood-${Math.random().toString(36).slice(2, 8)}`,
    payout_address: wallet.address,
    accepted_terms_version: TERMS_VERSION,
    address_proof: {
      nonce: challenge.nonce,
      signature: await wallet.signMessage({ message: challenge.message }),
    },
    invite_code: invite.stdout.trim(),
    abuse_contact: 'abuse@example.com',
  });
  return post(
    server.url,
    '/api/listings',
    { source: 'hosted', slug: 'flood-target', ssh_public_key: key.publicKey },
    { authorization: `Bearer ${creator.api_key}` },
  );
}

const openFiles = async (pid: number) => (await readdir(`/proc/${pid}/fd`)).length;

describe('an SSH connection flood against `repo402 serve`', () => {
  let server: ServerProcess | undefined;
  let dataDir: string | undefined;
  let flood: FloodConnection[] = [];
  afterAll(async () => {
    for (const conn of flood) conn.socket.destroy();
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves /api/health and git over SSH working, and the handshake deadline closes what it admitted', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-flood-'));
    const sshPort = await freePort();
    server = await startServerProcess({
      DATA_DIR: dataDir,
      SSH_PORT: String(sshPort),
      SSH_LISTEN_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    const pid = server.child.pid!;
    const key = await sshKeygen('ed25519');
    const listing = await hostedListing(server, dataDir, key);
    await exec('prlimit', ['--pid', String(pid), `--nofile=${SERVER_FILE_LIMIT}:${SERVER_FILE_LIMIT}`]);
    const baseline = await openFiles(pid);

    flood = await openFlood(sshPort);
    expect(flood).toHaveLength(SOURCES.length * PER_SOURCE);

    // While the flood is held open: health answers at once, a real git client gets through.
    const health = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(5000) });
    expect(health.status).toBe(200);
    const work = await mkdtemp(path.join(os.tmpdir(), 'repo402-flood-git-'));
    const lsRemote = await gitOverSsh(work, key.file, ['ls-remote', listing.remote]);
    await rm(work, { recursive: true, force: true });
    expect(lsRemote.code, lsRemote.stderr).toBe(0);

    // Over the per-address cap (10 by default) connections are closed at once, so the server's
    // open files stay near its baseline instead of growing with the flood.
    const admitted = flood.filter((conn) => conn.admitted);
    expect(admitted.length).toBeGreaterThanOrEqual(SOURCES.length);
    expect(admitted.length).toBeLessThanOrEqual(SOURCES.length * 10);
    expect(await openFiles(pid)).toBeLessThan(baseline + SOURCES.length * 10 + 50);
    const refused = flood.filter((conn) => !conn.admitted);
    for (const conn of refused) expect(conn.closedAt, 'a refused connection was kept').toBeDefined();

    // The admitted ones, banner or silent, are closed by the 10 s handshake deadline.
    const deadline = Date.now() + 25_000;
    while (flood.some((conn) => conn.closedAt === undefined) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    for (const conn of admitted) {
      expect(conn.closedAt, 'an idle connection outlived the handshake deadline').toBeDefined();
      expect(conn.closedAt! - conn.openedAt).toBeGreaterThanOrEqual(9000);
    }

    // One log line per cap and interval names the cap and an address, not one per refusal.
    const refusals = server
      .logs()
      .split('\n')
      .filter((line) => line.includes('"msg":"ssh connection refused"'))
      .map((line) => JSON.parse(line));
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(refusals.length).toBeLessThanOrEqual(5);
    expect(refusals[0]).toMatchObject({
      cap: 'per_address',
      limit: 10,
      address: expect.stringMatching(/^127\.0\.3\./),
    });
  }, 180_000);
});
