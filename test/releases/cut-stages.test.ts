import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CUT_STAGES, type CutStage } from '../../src/listings/cut-stages.js';
import { cutJob } from '../../src/releases/jobs.js';
import {
  cutsOf,
  findCut,
  findRelease,
  finishCut,
  insertCut,
  markCutStage,
  reclaimCut,
} from '../../src/releases/store.js';
import { bearer, type RegisteredCreator, registerCreator } from '../identity/support.js';
import { type CreatedListing, createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { commitFile, eventually, workRepo } from './support.js';

/**
 * A cut's stage (snapshot, analysis, scan, attestation): recorded on its `release_cuts` row as it
 * runs, shown on a pending release in the public and the creator's release logs, on the listing's
 * page in words, and on a cut that has no release yet in the listing answer's `cuts`. The cut is
 * real (a tag pushed into the listing's repository, then sync) and so is its inspection; the test
 * holds it at each stage boundary (the inspector's start, which comes beside the zip, with the
 * zip's upload held too; the inspector's stage callback; the SBOM upload before the attestation)
 * and looks at what each reader shows there.
 */

let key: SshKey;
beforeAll(async () => {
  key = await sshKeygen('ed25519');
});

interface Gate {
  /** Resolves once the cut waits here. */
  reached: Promise<void>;
  /** Resolves once the test opens the gate. */
  opened: Promise<void>;
  open(): void;
  /** Called by the cut: waits until the test opens the gate. */
  pass(): Promise<void>;
}

function gate(): Gate {
  let open!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  return {
    reached,
    opened,
    open,
    pass: async () => {
      reach();
      await opened;
    },
  };
}

/** `promise`, or a failure naming what did not happen in time (a held cut would otherwise hang the test). */
function within<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface StageBody {
  name: string;
  entered_at: string;
}
interface LoggedRelease {
  version: string;
  scan: string;
  stage?: StageBody;
}

describe.each(BACKENDS)("a cut's stage on %s", (backend) => {
  let t: TestApp;
  let alice: RegisteredCreator;
  let listing: CreatedListing;
  let work: Awaited<ReturnType<typeof workRepo>>;
  /** Lets a cut the test holds finish, so that a failing test still closes its app. */
  let release = () => {};

  beforeEach(async () => {
    t = await createTestApp({ backend, jobs: [cutJob] });
    alice = await registerCreator(t);
    listing = await createHostedListing(t, alice.apiKey, key.publicKey, {
      price_micro: '2500000',
      description: 'Tools',
      trigger_hint: 'When building',
    });
    work = await workRepo();
  });
  afterEach(async () => {
    release();
    release = () => {};
    await t.close();
  });

  const bare = () => path.join(t.dataDir, 'repos', listing.owner, `${listing.slug}.git`);
  const get = (url: string) => t.app.inject({ url, headers: bearer(alice.apiKey) });
  const publicLog = async () =>
    (
      (await t.app.inject({ url: `/api/v/${listing.owner}/${listing.slug}/releases` })).json() as {
        releases: LoggedRelease[];
      }
    ).releases;
  const ownLog = async () =>
    ((await get(`/api/listings/${listing.id}/releases`)).json() as { releases: LoggedRelease[] }).releases;
  const view = async () =>
    (await get(`/api/listings/${listing.id}`)).json() as {
      cuts: Array<{ version: string; state: string; stage?: StageBody }>;
      newest_release?: LoggedRelease;
    };

  /** Tags a new commit as `version`, pushes it into the listing's repository and asks for its cut. */
  const tagAndSync = async (version: string) => {
    await commitFile(work, 'v.txt', `${version}\n`, `Version ${version}`);
    await work.git('tag', `v${version}`);
    await work.git('push', '-q', bare(), 'main', '--tags');
    const sync = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/sync`,
      headers: bearer(alice.apiKey),
      payload: { version },
    });
    expect(sync.statusCode, sync.body).toBe(202);
  };
  const verdictOf = (version: string) =>
    eventually(async () => {
      const row = await findRelease(t.ctx.database.db, listing.id, version);
      return row && row.verdict !== 'pending' ? row.verdict : undefined;
    }, 90_000);

  it('moves through snapshot, analysis, scan and attestation in order, each shown while it lasts with when it began, and none once the verdict is in', async () => {
    // A published listing, so that its public log and page exist. A package manifest gives each
    // release an SBOM, whose upload comes just before the attestation.
    await commitFile(work, 'package.json', '{"name":"tool","version":"1.0.0"}\n', 'Manifest');
    await tagAndSync('1.0.0');
    expect(await verdictOf('1.0.0')).toBe('pass');
    const published = await t.app.inject({
      method: 'POST',
      url: `/api/listings/${listing.id}/publish`,
      headers: bearer(alice.apiKey),
    });
    expect(published.statusCode, published.body).toBe(200);

    const gates = Object.fromEntries(CUT_STAGES.map((stage) => [stage, gate()])) as Record<CutStage, Gate>;
    release = () => {
      for (const held of Object.values(gates)) held.open();
    };
    const reached: CutStage[] = [];
    const hold = (stage: CutStage) => {
      reached.push(stage);
      return gates[stage].pass();
    };
    // The real inspector, held as it starts (the analysis begins beside the zip, in the snapshot
    // stage) and after each stage it reports has been recorded.
    const inspector = t.ctx.inspectRelease;
    t.ctx.inspectRelease = async (input) => {
      await hold('snapshot');
      return inspector({
        ...input,
        onStage: async (stage) => {
          await input.onStage?.(stage);
          // The zip was let go with the snapshot's gate: each later stage is looked at on the
          // pending release it records.
          await eventually(() => findRelease(t.ctx.database.db, listing.id, input.version), 60_000);
          await hold(stage);
        },
      });
    };
    // The real blob store: the snapshot's zip waits until the snapshot stage has been looked at,
    // and the SBOM stored before the attestation is held.
    const blobs = t.ctx.blobs;
    t.ctx.blobs = new Proxy(blobs, {
      get(target, property) {
        if (property === 'putFile') {
          return async (...args: Parameters<typeof blobs.putFile>) => {
            await gates.snapshot.opened;
            return target.putFile(...args);
          };
        }
        if (property === 'putBytes') {
          return async (...args: Parameters<typeof blobs.putBytes>) => {
            if (args[0].endsWith('/sbom.json')) await hold('attestation');
            return target.putBytes(...args);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });

    await tagAndSync('1.1.0');
    const entered: string[] = [];
    for (const stage of CUT_STAGES) {
      await within(gates[stage].reached, `the cut to reach its ${stage} stage`);
      const at = t.clock.now().toISOString();
      entered.push(at);
      const expected = { name: stage, entered_at: at };
      if (stage === 'snapshot') {
        // No release row yet: only the creator sees the cut, in the listing answer.
        expect((await view()).cuts).toEqual([
          expect.objectContaining({ version: '1.1.0', state: 'queued', stage: expected }),
        ]);
        expect((await publicLog()).map((release) => release.version)).toEqual(['1.0.0']);
      } else {
        const [pending, passed] = await publicLog();
        expect(pending).toMatchObject({ version: '1.1.0', scan: 'pending', stage: expected });
        expect(passed!.version).toBe('1.0.0');
        expect(passed).not.toHaveProperty('stage');
        expect((await ownLog())[0]).toMatchObject({ version: '1.1.0', stage: expected });
        const listingView = await view();
        expect(listingView.newest_release).toMatchObject({ version: '1.1.0', stage: expected });
        expect(listingView.cuts).toEqual([]);
      }
      if (stage === 'scan') {
        const page = await t.app.inject({ url: `/${listing.owner}/${listing.slug}` });
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain(
          `Checking dependencies against known vulnerabilities and malware… Since <time datetime="${at}">${at.slice(0, 10)} ${at.slice(11, 16)} UTC</time>.`,
        );
      }
      // Each stage begins a minute after the one before, so its time is its own.
      t.clock.advance(60_000);
      gates[stage].open();
    }
    expect(reached).toEqual(['snapshot', 'analysis', 'scan', 'attestation']);
    expect(new Set(entered).size).toBe(4);

    expect(await verdictOf('1.1.0')).toBe('pass');
    const [done] = await publicLog();
    expect(done).toMatchObject({ version: '1.1.0', scan: 'pass' });
    expect(done).not.toHaveProperty('stage');
    expect((await ownLog())[0]).not.toHaveProperty('stage');
    const page = await t.app.inject({ url: `/${listing.owner}/${listing.slug}` });
    expect(page.body).not.toContain('Signing the attestation');
    expect((await view()).newest_release).toBeUndefined();
    // The row keeps the last stage it reached; with the verdict in, no reader shows it.
    const [cut] = await cutsOf(t.ctx.database.db, listing.id, ['cut']).then((cuts) =>
      cuts.filter((row) => row.version === '1.1.0'),
    );
    expect([cut!.stage, cut!.stageAt?.toISOString()]).toEqual(['attestation', entered[3]]);
  }, 120_000);

  it('only moves forward, starts again when a given-back version is claimed anew, and is absent while a cut waits for its job', async () => {
    const db = t.ctx.database.db;
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 12, minute));
    const cut = (await insertCut(db, {
      listingId: listing.id,
      version: '2.0.0',
      tag: 'v2.0.0',
      commitSha: 'a'.repeat(40),
      trigger: 'sync',
      requestedAt: at(0),
    }))!;
    const cutKey = { listingId: listing.id, version: '2.0.0' };
    const stageOf = async () => {
      const row = (await findCut(db, cut.id))!;
      return [row.stage, row.stageAt?.toISOString() ?? null];
    };
    // Queued, its job not started: the creator sees the cut, without a stage.
    const waiting = (await view()).cuts;
    expect(waiting).toEqual([expect.objectContaining({ version: '2.0.0', state: 'queued' })]);
    expect(waiting[0]).not.toHaveProperty('stage');

    expect(await markCutStage(db, cutKey, 'snapshot', at(1))).toBe(true);
    expect((await view()).cuts[0]!.stage).toEqual({ name: 'snapshot', entered_at: at(1).toISOString() });
    // Overlapping stages: the scan reached before the analysis reports keeps the scan.
    expect(await markCutStage(db, cutKey, 'scan', at(2))).toBe(true);
    expect(await markCutStage(db, cutKey, 'analysis', at(3))).toBe(false);
    expect(await markCutStage(db, cutKey, 'scan', at(4))).toBe(false);
    expect(await stageOf()).toEqual(['scan', at(2).toISOString()]);
    expect(await markCutStage(db, cutKey, 'attestation', at(5))).toBe(true);
    expect(await markCutStage(db, cutKey, 'snapshot', at(6))).toBe(false);
    expect(await stageOf()).toEqual(['attestation', at(5).toISOString()]);

    // A cut that ended moves no more, and a failed one shows no stage.
    await finishCut(db, cut.id, 'failed', at(7), 'not_found: gone', { givesVersionBack: true });
    const other = { listingId: listing.id, version: '2.0.1' };
    expect(await markCutStage(db, other, 'snapshot', at(7))).toBe(false);
    const failed = (await view()).cuts;
    expect(failed).toEqual([expect.objectContaining({ version: '2.0.0', state: 'failed' })]);
    expect(failed[0]).not.toHaveProperty('stage');

    // Claimed again, the cut runs from the start.
    expect(
      await reclaimCut(db, {
        listingId: listing.id,
        version: '2.0.0',
        tag: 'v2.0.0',
        commitSha: 'b'.repeat(40),
        trigger: 'sync',
        requestedAt: at(8),
      }),
    ).toBeDefined();
    expect(await stageOf()).toEqual([null, null]);
    expect(await markCutStage(db, cutKey, 'snapshot', at(9))).toBe(true);
  });
});
