import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitFile, gitOverSsh, workRepo } from '../releases/support.js';
import { runCli, type ServerProcess, startServerProcess } from '../support/process.js';
import { publishHostedListing, registerCreator } from '../support/seed-over-http.js';

/**
 * The moderation commands as an operator runs them: `repo402` in its own process, reaching the
 * running server (which holds the embedded database) through its control socket.
 */
describe('repo402 releases, listings, reports and audit against a running server', {
  timeout: 300_000,
}, () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-moderation-'));
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('suspends, yanks, resolves a report and lists the audit log through the control socket', async () => {
    const env = { DATA_DIR: dataDir };
    server = await startServerProcess(env);
    const target = { url: server.url, cliEnv: env };
    const creator = await registerCreator(target, 'moderated');
    const work = await workRepo();
    await commitFile(work, 'README.md', '# Notes\n\nRelease notes for agents.\n', 'First');
    await work.git('tag', '-a', 'v1.0.0', '-m', 'First release');
    const listing = await publishHostedListing(target, creator, {
      slug: 'notes',
      priceMicro: '1000000',
      gitDir: work.dir,
      version: '1.0.0',
    });
    const name = `${listing.owner}/${listing.slug}`;
    const cli = (...args: string[]) => runCli(args, env);

    // A reason is required.
    const bare = await cli('listings', 'suspend', name);
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toContain("required option '--reason <text>'");

    const suspended = await cli('listings', 'suspend', name, '--reason', 'copyright claim under review');
    expect(suspended.code, suspended.stderr).toBe(0);
    expect(JSON.parse(suspended.stdout)).toEqual({ subject: name, suspended: true, listings: [name] });
    const buy = await fetch(`${server.url}/api/r/${name}`);
    expect(buy.status).toBe(403);
    expect(await buy.json()).toMatchObject({
      code: 'suspended',
      details: { reason: 'copyright claim under review' },
    });
    const page = await (await fetch(`${server.url}/${name}`)).text();
    expect(page).toContain('copyright claim under review');
    // The server's git host refuses the creator's push, with the reason.
    await commitFile(work, 'CHANGES.md', 'More\n', 'Second');
    const remote = (
      await (
        await fetch(`${server.url}/api/listings/${listing.id}`, {
          headers: { authorization: `Bearer ${creator.apiKey}` },
        })
      ).json()
    ).remote as string;
    const push = await gitOverSsh(work.dir, creator.key.file, ['push', remote, 'main']);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain('this listing is suspended');
    expect((await cli('listings', 'unsuspend', name, '--reason', 'claim withdrawn')).code).toBe(0);
    expect((await fetch(`${server.url}/api/r/${name}`)).status).toBe(402);

    // A report, resolved by the operator.
    const filed = await fetch(`${server.url}/api/reports`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        listing: name,
        version: '1.0.0',
        category: 'secret_exposed',
        text: 'A token in README.md',
      }),
    });
    expect(filed.status).toBe(201);
    const { id } = (await filed.json()) as { id: string };
    const open = await cli('reports', 'list');
    expect(open.code, open.stderr).toBe(0);
    expect(
      open.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toMatchObject([
      { id, listing: name, category: 'secret_exposed', text: 'A token in README.md', resolved_at: null },
    ]);

    const yanked = await cli('releases', 'yank', name, '1.0.0', '--reason', 'a live token in README.md');
    expect(yanked.code, yanked.stderr).toBe(0);
    const log = (await (await fetch(`${server.url}/api/v/${name}/releases`)).json()) as {
      releases: Array<{ version: string; yanked?: { reason: string } }>;
    };
    expect(log.releases[0]).toMatchObject({
      version: '1.0.0',
      yanked: { reason: 'a live token in README.md' },
    });
    const again = await cli('releases', 'yank', name, '1.0.0', '--reason', 'twice');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not yanked already');
    expect((await cli('reports', 'resolve', id, '--note', 'release yanked')).code).toBe(0);
    expect((await cli('reports', 'list')).stdout).toBe('');

    const audit = await cli('audit');
    expect(audit.code, audit.stderr).toBe(0);
    const lines = audit.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(lines.map(([, host, action, subject]) => [host, action, subject])).toEqual([
      [os.hostname(), 'listing.suspend', name],
      [os.hostname(), 'listing.unsuspend', name],
      [os.hostname(), 'release.yank', `${name}@1.0.0`],
      [os.hostname(), 'report.resolve', id],
    ]);
    expect(lines[2]![4]).toBe('a live token in README.md');
    const json = await cli('audit', '--json');
    expect(JSON.parse(json.stdout.trim().split('\n')[0]!)).toMatchObject({ action: 'listing.suspend' });
  });
});
