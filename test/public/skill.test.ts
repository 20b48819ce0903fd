import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { verificationScript } from '../../src/public/verification-script.js';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../support/app.js';

describe('agent skill: buy-a-repo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('serves SKILL.md with valid front matter naming the skill after its folder', async () => {
    const res = await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    const match = /^---\n([\s\S]+?)\n---\n([\s\S]+)$/.exec(res.body);
    expect(match).not.toBeNull();
    const front = parse(match![1]!);
    expect(front.name).toBe('buy-a-repo');
    expect(front.name).toMatch(/^[a-z0-9-]{1,64}$/);
    expect(typeof front.description).toBe('string');
    expect(front.description.length).toBeLessThanOrEqual(1024);
    const body = match![2]!;
    expect(body).toContain(`${TEST_BASE_URL}/api/r/<owner>/<slug>`);
    for (const term of [
      'PAYMENT-SIGNATURE',
      'X-Quote-Id',
      'X-Wallet-Signature',
      'settlement_pending',
      'price_changed',
    ]) {
      expect(body).toContain(term);
    }
  });

  it("documents the owner's fast path beside the update path (issue 17 item 15)", async () => {
    const body = (await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' })).body;
    const section = body.slice(body.indexOf('## 2.'), body.indexOf('## 3.'));
    expect(section).toContain('X-Wallet-Signature');
    expect(section).toContain('`kind: "owned"`');
    expect(section).toContain("owner's fast path");
    expect(section).toContain('`update` 402');
  });

  it('defines latest as the newest passing release and links the release log (issue 17 item 14)', async () => {
    const body = (await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' })).body;
    expect(body).toContain('**Latest** means the version on sale: the newest release');
    expect(body).toContain('whose security scan\npassed');
    expect(body).toContain(`${TEST_BASE_URL}/api/v/<owner>/<slug>/releases`);
  });

  it('tells agents how flags from later advisory data reach them (issue 17 item 2c)', async () => {
    const body = (await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' })).body;
    for (const field of ['`advisory_flag`', '`flagged_holdings`', '`check_version`'])
      expect(body).toContain(field);
  });

  it('holds the whole offline verification, so an agent needs no other document to check a download', async () => {
    const body = (await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' })).body;
    expect(body).toContain(verificationScript(TEST_BASE_URL));
    expect(body).toContain('five lines starting\n`OK:`');
    // Naming the wallet on the resource: the grant carries the next challenge.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the guide shows a JS template literal
    expect(body).toContain('?address=${account.address}');
    expect(body).toContain('Name your wallet and you never ask for one');
  });

  it('lists it in the well-known index with the digest of the served bytes', async () => {
    const skill = await t.app.inject({ url: '/.well-known/agent-skills/buy-a-repo/SKILL.md' });
    const res = await t.app.inject({ url: '/.well-known/agent-skills/index.json' });
    expect(res.statusCode).toBe(200);
    const index = res.json();
    expect(index.skills).toEqual([
      {
        name: 'buy-a-repo',
        type: 'skill-md',
        description: expect.any(String),
        url: `${TEST_BASE_URL}/.well-known/agent-skills/buy-a-repo/SKILL.md`,
        digest: `sha256:${createHash('sha256').update(skill.rawPayload).digest('hex')}`,
      },
    ]);
  });

  it('answers HEAD for both, with no body', async () => {
    for (const url of [
      '/.well-known/agent-skills/buy-a-repo/SKILL.md',
      '/.well-known/agent-skills/index.json',
    ]) {
      const res = await t.app.inject({ method: 'HEAD', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toBe('');
    }
  });
});
