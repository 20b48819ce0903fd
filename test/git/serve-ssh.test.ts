import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, type ServerProcess, startServerProcess } from '../support/process.js';

const exec = promisify(execFile);

describe('repo402 serve', () => {
  let server: ServerProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('starts the SSH server with host keys kept in DATA_DIR, the same across restarts; the start-up log names both addresses', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-serve-'));
    const sshPort = await freePort();
    const env = { DATA_DIR: dataDir, SSH_PORT: String(sshPort), SSH_LISTEN_HOST: '127.0.0.1' };
    server = await startServerProcess(env);
    // One line tells the operator where HTTP and git over SSH listen (it may follow the first answer).
    const upLine = () =>
      server!
        .logs()
        .split('\n')
        .find((line) => line.includes('repo402 is up')) ?? '';
    await expect.poll(upLine).toContain(`HTTP on ${server.url}, git over SSH on 127.0.0.1:${sshPort}`);
    // What a real ssh client records on first connection, one host-key algorithm at a time.
    const scan = async () => {
      const keys: string[] = [];
      for (const algorithm of ['ssh-ed25519', 'ecdsa-sha2-nistp256']) {
        const knownHosts = path.join(dataDir!, `known_hosts_${algorithm}`);
        await rm(knownHosts, { force: true });
        await exec('ssh', [
          '-p',
          String(sshPort),
          '-o',
          `HostKeyAlgorithms=${algorithm}`,
          '-o',
          `UserKnownHostsFile=${knownHosts}`,
          '-o',
          'StrictHostKeyChecking=accept-new',
          '-o',
          'BatchMode=yes',
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          'IdentityFile=/dev/null',
          'git@127.0.0.1',
          'true',
        ]).catch(() => undefined); // no deploy key: authentication fails after the host key is recorded
        keys.push((await readFile(knownHosts, 'utf8')).trim().split(' ').slice(1).join(' '));
      }
      return keys.sort();
    };
    const first = await scan();
    expect(first).toHaveLength(2);
    const onDisk = await Promise.all(
      ['ssh_host_ed25519_key', 'ssh_host_ecdsa_key'].map(async (file) =>
        (await exec('ssh-keygen', ['-y', '-f', path.join(dataDir!, 'ssh', file)])).stdout.trim(),
      ),
    );
    expect(first).toEqual(onDisk.sort());
    expect(await server.stop()).toBe(0);
    server = await startServerProcess(env);
    expect(await scan()).toEqual(first);
  }, 120_000);
});
