import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { bearer, registerCreator } from '../identity/support.js';
import { type CreatedListing, createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { commitFile, workRepo } from '../releases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { codeBlocks } from '../support/code-blocks.js';
import { freePort } from '../support/process.js';

const exec = promisify(execFile);

describe("the selling guide's host-key instructions, against the real SSH server", () => {
  let t: TestApp;
  let ssh: SshServer;
  let port: number;
  let key: SshKey;
  beforeAll(async () => {
    port = await freePort();
    t = await createTestApp({ env: { SSH_PORT: String(port), SSH_HOST: '127.0.0.1' } });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { host: '127.0.0.1' });
    key = await sshKeygen('ed25519');
  });
  afterAll(async () => {
    await ssh?.close();
    await t?.close();
  });

  it('shows the fingerprints, the ssh-keyscan check and the known_hosts lines; the first push then passes StrictHostKeyChecking=yes', async () => {
    const html = (await t.app.inject({ url: '/docs/selling' })).body;
    const listed = [...html.matchAll(/<td><code>(SHA256:[A-Za-z0-9+/]+)<\/code><\/td>/g)]
      .map((m) => m[1])
      .sort();
    expect(listed).toHaveLength(2);
    const blocks = codeBlocks(html, 'sh');

    // The check, run as shown: what the server presents is what the guide lists.
    const check = blocks.find((block) => block.startsWith('ssh-keyscan'))!;
    expect(check.trim()).toBe(`ssh-keyscan -p ${port} 127.0.0.1 | ssh-keygen -lf -`);
    const scanned = (await exec('sh', ['-c', check])).stdout.trim().split('\n');
    expect(scanned.map((line) => line.split(' ')[1]).sort()).toEqual(listed);
    expect(scanned.every((line) => line.includes(`[127.0.0.1]:${port}`))).toBe(true);

    // The same keys a hosted listing's answer names.
    const alice = await registerCreator(t);
    const listing = (await createHostedListing(t, alice.apiKey, key.publicKey)) as CreatedListing & {
      remote: string;
      host_key_fingerprints: Array<{ sha256: string }>;
    };
    expect(listing.host_key_fingerprints.map((fingerprint) => fingerprint.sha256).sort()).toEqual(listed);
    expect(listing.remote).toBe(`ssh://git@127.0.0.1:${port}/${listing.owner}/${listing.slug}.git`);

    // The known_hosts lines, added as shown (HOME is a fresh directory).
    const pin = blocks.find((block) => block.includes('>> ~/.ssh/known_hosts'))!;
    const home = await mkdtemp(path.join(os.tmpdir(), 'repo402-home-'));
    await exec('sh', ['-c', pin], { env: { PATH: process.env.PATH, HOME: home } });
    const knownHosts = path.join(home, '.ssh', 'known_hosts');

    const work = await workRepo();
    await commitFile(work, 'README.md', '# Tool\n', 'First');
    const push = (file: string) =>
      exec('git', ['push', listing.remote, 'main'], {
        cwd: work.dir,
        env: {
          PATH: process.env.PATH,
          HOME: work.dir,
          GIT_SSH_COMMAND: `ssh -i ${key.file} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${file}`,
        },
      });
    const empty = path.join(home, 'empty_known_hosts');
    await writeFile(empty, '');
    await expect(push(empty)).rejects.toThrow(/Host key verification failed/);
    await push(knownHosts);
  });

  it("pushes a fresh `master` repository with the guide's own commands, and the tag is queued as a release", async () => {
    const blocks = codeBlocks((await t.app.inject({ url: '/docs/selling' })).body, 'sh');
    const pin = blocks.find((block) => block.includes('>> ~/.ssh/known_hosts'))!;
    const push = blocks.find((block) => block.includes('git remote add repo402'))!;
    // The push names no branch of the creator's: whatever is checked out becomes the listing's `main`.
    expect(push).toContain('git push repo402 HEAD:main --tags');
    expect(push).not.toMatch(/git push repo402 main\b/);

    const creator = await registerCreator(t);
    const deployKey = await sshKeygen('ed25519');
    const listing = await createHostedListing(t, creator.apiKey, deployKey.publicKey);
    const home = await mkdtemp(path.join(os.tmpdir(), 'repo402-home-'));
    // OpenSSH finds ~/.ssh through the user database, never $HOME: an `ssh` first on PATH points it
    // at this HOME's known_hosts, so the guide's commands run exactly as printed.
    const bin = path.join(home, 'bin');
    await mkdir(bin);
    const ssh = (await exec('sh', ['-c', 'command -v ssh'])).stdout.trim();
    await writeFile(
      path.join(bin, 'ssh'),
      `#!/bin/sh\nexec ${ssh} -o "UserKnownHostsFile=$HOME/.ssh/known_hosts" "$@"\n`,
      { mode: 0o755 },
    );
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
    await exec('sh', ['-c', pin], { env });

    // `git init` on a machine whose default branch is still `master`.
    const work = await workRepo({ branch: 'master' });
    await commitFile(work, 'README.md', '# Tool\n\nDoes things.\n', 'First');
    expect((await work.git('branch', '--show-current')).trim()).toBe('master');
    // The guide's key file is `deploy_key` in the working directory, as its ssh-keygen line makes it.
    await copyFile(deployKey.file, path.join(work.dir, 'deploy_key'));
    const commands = push.replaceAll('<handle>', listing.owner).replaceAll('my-tool', listing.slug);
    const pushed = await exec('sh', ['-e', '-c', commands], {
      cwd: work.dir,
      env: {
        ...env,
        GIT_AUTHOR_NAME: 'Creator',
        GIT_AUTHOR_EMAIL: 'creator@example.com',
        GIT_COMMITTER_NAME: 'Creator',
        GIT_COMMITTER_EMAIL: 'creator@example.com',
      },
    });
    expect(pushed.stderr).toContain('repo402: release 1.0.0 queued');
    expect(pushed.stderr).toMatch(/\* \[new branch\]\s+HEAD -> main/);

    const answer = await t.app.inject({
      url: `/api/listings/${listing.id}`,
      headers: bearer(creator.apiKey),
    });
    const { cuts } = answer.json() as { cuts: Array<{ version: string; tag: string }> };
    expect(cuts.map((cut) => [cut.version, cut.tag])).toEqual([['1.0.0', 'v1.0.0']]);
  });
});
