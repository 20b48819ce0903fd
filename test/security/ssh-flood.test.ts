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
import { commitFile, eventually, gitOverSsh, workRepo } from '../releases/support.js';
import { freePort, runCli, type ServerProcess, startServerProcess } from '../support/process.js';

const exec = promisify(execFile);

/**
 * The flood: 40 source addresses (all this machine's loopback), each in a /24 of its own so no
 * per-block cap holds them back, × 50 connections each (10 per address are admitted at most).
 */
const SOURCES = Array.from({ length: 40 }, (_, i) => `127.0.${i + 1}.7`);
const PER_SOURCE = 50;
/** Where the creator pushes from: a block of its own. */
const CREATOR_ADDRESS = '127.0.200.7';
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
async function hostedListing(
  server: ServerProcess,
  dataDir: string,
  key: SshKey,
): Promise<{ id: string; remote: string; apiKey: string }> {
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
  const listing = await post(
    server.url,
    '/api/listings',
    { source: 'hosted', slug: 'flood-target', ssh_public_key: key.publicKey },
    { authorization: `Bearer ${creator.api_key}` },
  );
  return { id: listing.id, remote: listing.remote, apiKey: creator.api_key };
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

  it('leaves /api/health working, lets a creator push a release, and the handshake deadline closes what it admitted', async () => {
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
    const openNow = flood.filter((conn) => conn.admitted && conn.closedAt === undefined);
    // 128 unauthenticated places by default, every one of them taken.
    expect(openNow.length).toBeGreaterThanOrEqual(100);
    expect(openNow.length).toBeLessThanOrEqual(128);

    // While the flood is held open: health answers at once, and a creator's real git pushes a
    // release tag from another address.
    const health = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(5000) });
    expect(health.status).toBe(200);
    const repo = await workRepo();
    await commitFile(repo, 'README.md', '# flood-target\n', 'first');
    await repo.git('tag', 'v1.0.0');
    const push = await gitOverSsh(repo.dir, key.file, ['push', listing.remote, 'main', '--tags'], {
      bindAddress: CREATOR_ADDRESS,
    });
    expect(push.code, push.stderr).toBe(0);
    const pushedAt = Date.now();
    const release = await eventually(async () => {
      const res = await fetch(`${server!.url}/api/listings/${listing.id}`, {
        headers: { authorization: `Bearer ${listing.apiKey}` },
      });
      const body = await res.json();
      return (body.latest_release ?? body.newest_release)?.version as string | undefined;
    }, 60_000);
    expect(release).toBe('1.0.0');
    await rm(repo.dir, { recursive: true, force: true });

    // The server's open files stay near its baseline instead of growing with the flood.
    expect(await openFiles(pid)).toBeLessThan(baseline + 128 + 50);
    const refused = flood.filter((conn) => !conn.admitted);
    for (const conn of refused) expect(conn.closedAt, 'a refused connection was kept').toBeDefined();

    // The creator's connection took the place of one flood connection; the others still open,
    // banner or silent, are closed by the 10 s handshake deadline.
    const deadline = Date.now() + 25_000;
    while (flood.some((conn) => conn.closedAt === undefined) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const gaveWay = openNow.filter((conn) => conn.closedAt !== undefined && conn.closedAt <= pushedAt);
    expect(gaveWay).toHaveLength(1);
    for (const conn of openNow.filter((conn) => !gaveWay.includes(conn))) {
      expect(conn.closedAt, 'an idle connection outlived the handshake deadline').toBeDefined();
      expect(conn.closedAt! - conn.openedAt).toBeGreaterThanOrEqual(9000);
    }

    // One log line per block and cap, not one per refusal.
    const refusals = server
      .logs()
      .split('\n')
      .filter((line) => line.includes('"msg":"ssh connection refused"'))
      .map((line) => JSON.parse(line) as { cap: string; block: string });
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(refusals.length).toBeLessThan(refused.length);
    const lines = refusals.map(({ cap, block }) => `${cap} ${block}`);
    expect(new Set(lines).size, 'a block was logged twice for one cap').toBe(lines.length);
    for (const line of refusals) expect(line.block).toMatch(/^127\.0\.\d+\.0\/24$/);
  }, 180_000);
});
