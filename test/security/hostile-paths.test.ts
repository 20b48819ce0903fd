import { mkdir, readdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { cutJob } from '../../src/releases/jobs.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { findRelease } from '../../src/releases/store.js';
import { bearer, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { eventually, gitOverSsh, workRepo } from '../releases/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PGLITE_ONLY } from '../support/db.js';
import { watchResponsiveness } from '../support/responsiveness.js';
import { isInside, linksUnder, unzipped } from '../support/zip.js';

/**
 * Issue 13, item 6: the hostile repository of the outside review, pushed with the real git client
 * over the real SSH server and cut by the real job and inspector. Its release must fail the scan
 * with each dangerous path named (escaped), be logged as failing, and its zip must hold no link
 * that leaves it; a clean follow-up passes and discloses its in-tree link to buyers. The service
 * answers throughout.
 */
let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

describe.each(PGLITE_ONLY)('a hostile repository pushed over SSH on %s', (backend) => {
  let t: TestApp;
  let ssh: SshServer;
  let creator: RegisteredCreator;
  let watch: ReturnType<typeof watchResponsiveness> | undefined;

  beforeEach(async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    creator = await registerCreator(t);
  });
  afterEach(async () => {
    await watch?.stop();
    watch = undefined;
    await ssh.close();
    await t.close();
  });

  it('fails the scan naming each dangerous path escaped, logs it, zips no escaping link, and stays responsive', {
    timeout: 240_000,
  }, async () => {
    const listing = await createHostedListing(t, creator.apiKey, key.publicKey, { price_micro: '1000000' });
    const remote = `ssh://git@127.0.0.1:${ssh.port}/${listing.owner}/${listing.slug}.git`;

    watch = watchResponsiveness(t);

    const work = await workRepo();
    const at = (name: string) => path.join(work.dir, name);
    await mkdir(at('docs'));
    await writeFile(at('README.md'), '# Hostile\n');
    await writeFile(at('docs/guide.md'), 'Guide\n');
    await symlink('/etc/passwd', at('passwd'));
    await symlink('../../../../etc/shadow', at('shadow'));
    await symlink('/', at('root'));
    await symlink('.', at('x'));
    await symlink('x/..', at('y'));
    await symlink('docs/guide.md', at('latest'));
    await writeFile(at('back\\..\\..\\win-evil.bat'), 'echo evil\n');
    await writeFile(at('invoice\u202egnp.exe'), 'not an exe\n');
    await writeFile(at('notes\nforged.txt'), 'forged\n');
    await work.git('add', '-A');
    await work.git('commit', '-q', '-m', 'Hostile tree');
    await work.git('tag', '-a', 'v1.0.0', '-m', 'Hostile');
    const push = await gitOverSsh(work.dir, key.file, ['push', remote, 'main', '--tags']);
    expect(push.code, push.stderr).toBe(0);
    expect(push.stderr).toContain('repo402: release 1.0.0 queued');

    const db = t.ctx.database.db;
    const hostile = await eventually(async () => {
      const row = await findRelease(db, listing.id, '1.0.0');
      return row && row.verdict !== 'pending' ? row : undefined;
    }, 180_000);
    expect(hostile.verdict).toBe('fail');

    // The creator's report names each dangerous path, escaped.
    const view = (
      await t.app.inject({ url: `/api/listings/${listing.id}`, headers: bearer(creator.apiKey) })
    ).json();
    const report = view.newest_release.scan_report as {
      findings: Array<{ tier: string; check: string; rule_id: string; path?: string }>;
    };
    const blocking = report.findings
      .filter((f) => f.tier === 'blocking')
      .map((f) => `${f.check} ${f.rule_id} ${f.path}`)
      .sort();
    expect(blocking).toEqual([
      'injection path-bidi-control invoice\\u202egnp.exe',
      'injection path-control-character notes\\nforged.txt',
      'limits path-backslash back\\\\..\\\\..\\\\win-evil.bat',
      'limits symlink-escape passwd',
      'limits symlink-escape root',
      'limits symlink-escape shadow',
      'limits symlink-escape y',
    ]);
    expect(report.findings.filter((f) => f.rule_id === 'symlink').map((f) => f.path)).toEqual([
      'latest',
      'passwd',
      'root',
      'shadow',
      'x',
      'y',
    ]);

    // The zip, opened by a real extractor: only the links that stay inside are links.
    const { stream } = await t.ctx.blobs.open(hostile.artifactKey!);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const into = await unzipped(Buffer.concat(chunks));
    const [top] = await readdir(into);
    const root = await realpath(path.join(into, top!));
    const links = await linksUnder(root);
    expect(links.map((l) => l.link).sort()).toEqual(['latest', 'x']);
    for (const { resolved } of links) expect(isInside(root, resolved)).toBe(true);
    expect(await readFile(path.join(root, 'passwd'), 'utf8')).toBe('/etc/passwd');

    // A clean follow-up keeps its in-tree link: it passes, and buyers are told about the link.
    await work.git('rm', '-q', 'passwd', 'shadow', 'root', 'y', 'back\\..\\..\\win-evil.bat');
    await work.git('rm', '-q', 'invoice\u202egnp.exe', 'notes\nforged.txt');
    await work.git('commit', '-q', '-m', 'Clean tree');
    await work.git('tag', '-a', 'v1.1.0', '-m', 'Clean');
    expect((await gitOverSsh(work.dir, key.file, ['push', remote, 'main', '--tags'])).code).toBe(0);
    const clean = await eventually(async () => {
      const row = await findRelease(db, listing.id, '1.1.0');
      return row && row.verdict !== 'pending' ? row : undefined;
    }, 180_000);
    expect(clean.verdict).toBe('pass');
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/listings/${listing.id}`,
      headers: bearer(creator.apiKey),
      payload: { description: 'Tools', trigger_hint: 'When you need tools' },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const publish = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/publish`,
      headers: bearer(creator.apiKey),
    });
    expect(publish.statusCode, publish.body).toBe(200);

    const log = await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` });
    expect(log.statusCode, log.body).toBe(200);
    expect(log.json().releases.map((r: { version: string; scan: string }) => [r.version, r.scan])).toEqual([
      ['1.1.0', 'pass'],
      ['1.0.0', 'fail'],
    ]);
    const label = (await t.app.inject({ url: `/api/label/${listing.owner}/${listing.slug}` })).json();
    expect(label.version).toBe('1.1.0');
    expect(label.computed.scan.findings.filter((f: { rule_id: string }) => f.rule_id === 'symlink')).toEqual([
      {
        kind: 'path',
        check: 'limits',
        tier: 'disclosed',
        rule_id: 'symlink',
        severity: 'LOW',
        description: 'Symlink to docs/guide.md',
        path: 'latest',
      },
      {
        kind: 'path',
        check: 'limits',
        tier: 'disclosed',
        rule_id: 'symlink',
        severity: 'LOW',
        description: 'Symlink to .',
        path: 'x',
      },
    ]);

    // Responsive throughout: every health check answered, none slower than a second, the event loop
    // never held for one (the 200 ms bound under a full-size cut is test/releases/cut-event-loop.test.ts).
    const seen = await watch.stop();
    expect(seen.statuses).toEqual([200]);
    expect(seen.healthMs.length).toBeGreaterThan(5);
    expect(Math.max(...seen.healthMs), seen.summary).toBeLessThan(1000);
    expect(seen.maxDelayMs, seen.summary).toBeLessThan(1000);
  });
});
