import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase } from '../src/db/connect.js';
import { invites } from '../src/db/schema/index.js';
import { sha256Hex } from '../src/platform/tokens.js';
import { runCli, type ServerProcess, startServerProcess } from './support/process.js';

const INVITE = /^r402inv_[A-Za-z0-9_-]{22}$/;

describe('repo402 CLI', { timeout: 120_000 }, () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-cli-'));
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('invites create prints only the codes, one per line, and stores only their hashes', async () => {
    const result = await runCli(['invites', 'create', '--count', '3'], { DATA_DIR: dataDir });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(INVITE);
    expect(new Set(lines).size).toBe(3);

    const database = await connectDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
    try {
      const rows = await database.db.select().from(invites);
      expect(rows.map((row) => row.codeHash).sort()).toEqual(lines.map(sha256Hex).sort());
      expect(JSON.stringify(rows)).not.toContain('r402inv_');
    } finally {
      await database.close();
    }
  });

  it('defaults to one invite', async () => {
    const result = await runCli(['invites', 'create'], { DATA_DIR: dataDir });
    expect(result.stdout.trim()).toMatch(INVITE);
  });

  it.each([['0'], ['1001'], ['abc'], ['-1']])(
    'refuses --count %s without printing anything on stdout',
    async (count) => {
      const result = await runCli(['invites', 'create', '--count', count], { DATA_DIR: dataDir });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('--count');
    },
  );

  it('names an unknown command instead of starting the server', async () => {
    const result = await runCli(['bogus'], { DATA_DIR: dataDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("unknown command 'bogus'");
    expect(result.stdout).toBe('');
  });

  it('stops on a bad configuration value, naming the variable', async () => {
    const result = await runCli(['serve'], { DATA_DIR: dataDir, PORT: 'eighty' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORT="eighty"');
  });

  it('reaches a running server through its control socket: invites, pause and resume', async () => {
    server = await startServerProcess({ DATA_DIR: dataDir });
    // The embedded database is locked by the server: this only works through the control socket.
    const created = await runCli(['invites', 'create', '--count', '2'], { DATA_DIR: dataDir });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim().split('\n')).toHaveLength(2);

    expect((await runCli(['pause'], { DATA_DIR: dataDir })).code).toBe(0);
    const paused = await fetch(`${server.url}/api/terms`);
    expect(paused.status).toBe(503);
    expect((await paused.json()).code).toBe('paused');
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);

    expect((await runCli(['resume'], { DATA_DIR: dataDir })).code).toBe(0);
    expect((await fetch(`${server.url}/api/terms`)).status).toBe(200);
  });

  it('migrate applies migrations to a new data directory', async () => {
    const result = await runCli(['migrate'], { DATA_DIR: dataDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
  });
});
