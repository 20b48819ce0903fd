import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseCuts } from '../../src/db/schema/index.js';
import { PAUSED_PUSH, type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { findRelease } from '../../src/releases/store.js';
import { type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { eventually, gitOverSsh, taggedHostedListing, testInspector } from './support.js';

/**
 * Issue 39: a pause reaches the git host. Pushes are refused with the pause's words and change
 * nothing; a cut already queued is held, not failed, and runs once the operator resumes.
 */
describe('pausing the git host', () => {
  let t: TestApp;
  let ssh: SshServer;
  let key: SshKey;

  beforeAll(async () => {
    t = await createTestApp({ jobs: [cutJob] });
    t.ctx.inspectRelease = testInspector();
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    key = await sshKeygen('ed25519');
  });
  afterAll(async () => {
    await ssh?.close();
    await t?.close();
  });

  const taggedListing = () => taggedHostedListing(t, ssh.port, key);

  it('refuses pushes while paused and takes them after; reads still work', async () => {
    const { listing, remote, work } = await taggedListing();

    await t.ctx.pause.set(true);
    const refused = await gitOverSsh(work.dir, key.file, ['push', remote, 'main', '--tags']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`repo402: ${PAUSED_PUSH}`);
    const listed = await gitOverSsh(work.dir, key.file, ['ls-remote', remote]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe('');
    expect(
      await t.ctx.database.db.select().from(releaseCuts).where(eq(releaseCuts.listingId, listing.id)),
    ).toEqual([]);

    await t.ctx.pause.set(false);
    const pushed = await gitOverSsh(work.dir, key.file, ['push', remote, 'main', '--tags']);
    expect(pushed.code, pushed.stderr).toBe(0);
    await eventually(() => findRelease(t.ctx.database.db, listing.id, '1.0.0'));
  });

  it('holds a queued cut while paused, without failing it, and cuts it on resume', async () => {
    const { listing, remote, work } = await taggedListing();
    // Paused between the push and its cut: the job finds the pause.
    const sent: unknown[] = [];
    const jobs = t.ctx.jobs!;
    const send = jobs.send.bind(jobs);
    jobs.send = (async (spec, data, options) => {
      if (spec.name === cutJob.name && sent.length === 0) {
        sent.push(data);
        await t.ctx.pause.set(true);
      }
      return send(spec, data, options);
    }) as typeof jobs.send;
    try {
      const pushed = await gitOverSsh(work.dir, key.file, ['push', remote, 'main', '--tags']);
      expect(pushed.code, pushed.stderr).toBe(0);
      const [cut] = await eventually(async () => {
        const rows = await t.ctx.database.db
          .select()
          .from(releaseCuts)
          .where(eq(releaseCuts.listingId, listing.id));
        return rows.length > 0 ? rows : undefined;
      });
      // Several runs come and go while paused: the cut stays queued and nothing is released.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const [held] = await t.ctx.database.db.select().from(releaseCuts).where(eq(releaseCuts.id, cut!.id));
      expect(held!.state).not.toBe('failed');
      expect(await findRelease(t.ctx.database.db, listing.id, '1.0.0')).toBeUndefined();
    } finally {
      jobs.send = send;
    }
    await t.ctx.pause.set(false);
    const release = await eventually(() => findRelease(t.ctx.database.db, listing.id, '1.0.0'), 60_000);
    expect(release.version).toBe('1.0.0');
  }, 90_000);
});
