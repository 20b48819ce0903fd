import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { CUT_STAGE_WORDS } from '../../listings/cut-stages.js';
import { parseUsd } from '../../platform/money/usd.js';
import { ApiError, api, query } from '../api.js';
import { CopyBlock } from '../components/copy.js';
import { ErrorNotice, PageFailed } from '../components/error-notice.js';
import { FieldError, FormNotice, useFormErrors } from '../components/form-errors.js';
import { ListingWordsFields, wordsProblems } from '../components/listing-words-fields.js';
import { MoreButton } from '../components/more-button.js';
import { microFromDollars, PriceInput, pricedProblems } from '../components/price-fields.js';
import { ScanReportView, Verdict } from '../components/scan-report.js';
import type { FormField } from '../errors.js';
import { dollarsField, plural, shortHex, usd, utc, when } from '../format.js';
import type { CutStageView, Listing, ListingRelease } from '../listing-types.js';
import { type Loaded, useLoad, usePaged, usePoll } from '../use-load.js';

const LICENCES = ['MIT', 'Apache-2.0', 'BSD-3-Clause', 'MPL-2.0'] as const;

/** One listing: how to push to it, its releases and their scan reports, its manifest, and every action on it. */
export function ListingPage({ id }: { id: string }) {
  const listing = useLoad(() => api<Listing>('GET', `/listings/${id}`), `listing-${id}`);
  const releases = usePaged(async (cursor) => {
    const page = await api<{ releases: ListingRelease[]; next_cursor: string | null }>(
      'GET',
      `/listings/${id}/releases${query({ cursor })}`,
    );
    return { items: page.releases, next: page.next_cursor };
  }, `releases-${id}`);
  const refresh = useCallback(async () => {
    await Promise.all([listing.reload(), releases.reload()]);
  }, [listing.reload, releases.reload]);
  const working =
    (listing.data?.cuts ?? []).some((cut) => cut.state === 'queued') ||
    releases.items.some((release) => release.scan === 'pending');
  // The listing document is small and names its newest releases and cuts, so it is what is polled,
  // every 2 seconds while the tab is in view: a release the service has shows here within about
  // 2 seconds. The releases, with their scan reports, are read again only when it changes.
  usePoll(listing.data?.status !== 'retired', listing.reload, 2000);
  // The listing document names only the newest release: an older one still being inspected (several
  // tags pushed at once) is followed by reading the releases themselves while it lasts.
  const newestVersion = listing.data?.newest_release?.version;
  usePoll(
    releases.items.some((release) => release.scan === 'pending' && release.version !== newestVersion),
    releases.reload,
    2000,
  );
  const releasesShown = releaseSignature(listing.data);
  const firstSignature = useRef(releasesShown);
  useEffect(() => {
    if (releasesShown === firstSignature.current) return;
    firstSignature.current = releasesShown;
    void releases.reload();
  }, [releasesShown]);

  if (!listing.data) {
    return listing.error ? <PageFailed what="This listing" error={listing.error} /> : <p>Loading…</p>;
  }
  const data = listing.data;
  return (
    <section>
      <p class="muted small">
        <a href="/app/listings">Listings</a> /
      </p>
      <div class="title-row">
        <h1>
          {data.owner}/{data.slug}
        </h1>
        <span class={`badge status-${data.status}`}>{data.status}</span>
      </div>
      {data.published_at ? (
        <p>
          <a href={`/${data.owner}/${data.slug}`}>Public page</a>
          {data.status === 'retired' ? ' (retired: holders can still download what they own)' : ''}
        </p>
      ) : (
        <p class="muted small">Its public page appears once you publish it.</p>
      )}
      <Progress listing={data} releases={releases.items} working={working} />
      {data.source === 'hosted' ? (
        <HostedSetup listing={data} done={refresh} />
      ) : (
        <GitHubSource listing={data} />
      )}
      {data.status !== 'retired' ? <Actions listing={data} done={refresh} /> : null}
      {data.status !== 'retired' ? <DetailsForm listing={data} done={listing.reload} /> : null}
      <h2 id="releases-heading">Releases</h2>
      <ErrorNotice error={releases.error} />
      {releases.items.length === 0 && !releases.loading ? (
        <p class="muted">
          No release yet: push a vX.Y.Z tag, or sync. This page updates by itself when one arrives.
        </p>
      ) : (
        <ol class="releases" aria-labelledby="releases-heading">
          {releases.items.map((release, index) => (
            <ReleaseItem
              key={release.version}
              release={release}
              open={index === 0}
              previous={releases.items[index + 1]?.version ?? (releases.more ? undefined : null)}
            />
          ))}
        </ol>
      )}
      <MoreButton more={releases.more} />
      <ManifestPreview listing={listing} />
    </section>
  );
}

/** Work the service is doing for this listing (a cut queued, a release being inspected), live. */
function Progress({
  listing,
  releases,
  working,
}: {
  listing: Listing;
  releases: ListingRelease[];
  working: boolean;
}) {
  const cuts = listing.cuts ?? [];
  const inspecting = releases.filter((release) => release.scan === 'pending');
  if (cuts.length === 0 && inspecting.length === 0) return null;
  return (
    <div class="notice" role="status" aria-live="polite" id="progress">
      {cuts.map((cut) =>
        cut.state === 'queued' ? (
          <p key={cut.version}>
            <span class="spinner" aria-hidden="true" /> Cutting {cut.version} from <code>{cut.tag}</code> (
            {shortHex(cut.commit_sha, 5)}):{' '}
            {cut.stage ? <StageWords stage={cut.stage} /> : 'snapshot queued.'}
          </p>
        ) : (
          <p key={cut.version} class="bad">
            {cut.version} could not be cut: {cut.failure_reason}
          </p>
        ),
      )}
      {inspecting.map((release) => (
        <p key={release.version}>
          <span class="spinner" aria-hidden="true" /> {release.version}:{' '}
          {release.stage ? <StageWords stage={release.stage} /> : 'analysing and scanning.'}
        </p>
      ))}
      {working ? <p class="muted small">This updates by itself.</p> : null}
    </div>
  );
}

/** What a running cut is doing, and since when (in the reader's time; UTC on hover). */
function StageWords({ stage }: { stage: CutStageView }) {
  return (
    <>
      {CUT_STAGE_WORDS[stage.name]} Since{' '}
      <time datetime={stage.entered_at} title={utc(stage.entered_at)}>
        {when(stage.entered_at)}
      </time>
      .
    </>
  );
}

function HostedSetup({ listing, done }: { listing: Listing; done: () => Promise<void> }) {
  const [key, setKey] = useState('');
  const errors = useFormErrors();
  const [replaced, setReplaced] = useState(false);
  const branch = listing.default_branch ?? 'main';
  const replace = async (event: Event) => {
    event.preventDefault();
    setReplaced(false);
    if (!key.trim()) return errors.invalid({ 'replace-key': 'Paste the new public key here first.' });
    errors.clear();
    try {
      await api('PUT', `/listings/${listing.id}/ssh-key`, { ssh_public_key: key.trim() });
      setKey('');
      setReplaced(true);
      await done();
    } catch (caught) {
      errors.fail(caught, { ssh_public_key: { id: 'replace-key', label: 'The key' } });
    }
  };
  return (
    <details class="card" open={!listing.latest_release && !listing.newest_release}>
      <summary>
        <h2>Push your code</h2>
      </summary>
      <p>From your repository, add repo402 as a remote and push your branch and tags:</p>
      <CopyBlock text={pushCommands(listing.remote ?? '', branch)} label="push commands" />
      <p class="muted small">
        <code>HEAD:{branch}</code> pushes the branch you have checked out, whatever its name (
        <code>main</code>, <code>master</code>…), to this listing's <code>{branch}</code>, the branch releases
        and the licence are read from.
      </p>
      <p>
        Then tag a version to release it: <code>git tag v1.0.0 &amp;&amp; git push repo402 v1.0.0</code>
      </p>
      <p>On first connection, check that the host key ssh shows is one of these:</p>
      <ul class="fingerprints">
        {(listing.host_key_fingerprints ?? []).map((fingerprint) => (
          <li key={fingerprint.sha256}>
            <code>
              {fingerprint.type} {fingerprint.sha256}
            </code>
          </li>
        ))}
      </ul>
      <p class="muted small">
        Deploy key: <code>{listing.deploy_key_fingerprint ?? 'none'}</code>
      </p>
      {listing.status !== 'retired' ? (
        <form onSubmit={replace} noValidate>
          <label for="replace-key">Replace the deploy key</label>
          <textarea
            id="replace-key"
            class="mono"
            rows={2}
            value={key}
            onInput={(e) => {
              errors.edited('replace-key');
              setReplaced(false);
              setKey(e.currentTarget.value);
            }}
            {...errors.inputProps('replace-key', 'replace-key-help')}
          />
          <FieldError form={errors} id="replace-key" />
          <p id="replace-key-help" class="muted small">
            The public key (a line starting <code>ssh-ed25519</code>, <code>ecdsa-sha2-</code> or{' '}
            <code>ssh-rsa</code>) whose private key pushes here. The old key stops working at once.
          </p>
          <FormNotice form={errors} />
          {replaced ? (
            <div class="notice good" role="status">
              Key replaced: pushes now need the new key.
            </div>
          ) : null}
          <button type="submit" class="secondary">
            Replace key
          </button>
        </form>
      ) : null}
    </details>
  );
}

/** What a creator types to send a repository here, whatever their local branch is called. */
export function pushCommands(remote: string, branch: string): string {
  return `git remote add repo402 ${remote}\ngit push repo402 HEAD:${branch} --tags`;
}

function GitHubSource({ listing }: { listing: Listing }) {
  const github = listing.github;
  if (!github) return null;
  return (
    <div class={`card ${github.state === 'ok' ? '' : 'bad'}`}>
      <h2>Source</h2>
      <p>
        GitHub repository <code>{github.repo}</code>: {github.state === 'ok' ? 'reachable' : github.reason}
      </p>
    </div>
  );
}

function Actions({ listing, done }: { listing: Listing; done: () => Promise<void> }) {
  const errors = useFormErrors();
  const [message, setMessage] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [spdx, setSpdx] = useState<string>(LICENCES[0]);
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const name = `${listing.owner}/${listing.slug}`;
  // A refusal is about the listing as it was: once what it asked for changes (a price set, a
  // release passed, words saved), it no longer applies and goes.
  const state = JSON.stringify([
    listing.status,
    listing.pricing,
    listing.description,
    listing.trigger_hint,
    listing.licence,
    releaseSignature(listing),
  ]);
  const shownFor = useRef(state);
  useEffect(() => {
    if (shownFor.current === state) return;
    shownFor.current = state;
    errors.clear();
  }, [state]);

  const run = (work: () => Promise<string>) => async () => {
    setBusy(true);
    errors.clear();
    setMessage(undefined);
    try {
      const said = await work();
      await done();
      shownFor.current = state;
      setMessage(said);
    } catch (caught) {
      errors.fail(caught);
    } finally {
      setBusy(false);
    }
  };
  const sync = run(async () => {
    const cut = await api<{ version: string; tag: string }>('POST', `/listings/${listing.id}/sync`, {}).catch(
      (caught: unknown) => {
        throw nothingToSync(caught);
      },
    );
    return `Release ${cut.version} (from tag ${cut.tag}) is being cut. It appears under Releases below.`;
  });
  const publish = run(async () => {
    await api('POST', `/listings/${listing.id}/publish`);
    return 'Published: the listing is on sale.';
  });
  const licence = run(async () => {
    const result = await api<{ committed: boolean; next_step: string }>(
      'POST',
      `/listings/${listing.id}/licence`,
      { spdx },
    );
    return result.committed
      ? `LICENSE (${spdx}) committed to ${listing.default_branch ?? 'main'}. Pull it before your next push (git pull repo402 ${listing.default_branch ?? 'main'}), then tag a version: the release cut from it carries the licence.`
      : `${spdx} is the licence on ${listing.default_branch ?? 'main'} already: nothing to commit.`;
  });
  const retire = run(async () => {
    await api('DELETE', `/listings/${listing.id}`);
    setConfirming(false);
    return 'Retired: it is no longer sold; holders keep what they own.';
  });

  return (
    <div class="card" id="actions">
      <h2>Actions</h2>
      <div class="buttons">
        <button type="button" onClick={sync} disabled={busy}>
          Sync newest tag
        </button>
        {listing.status === 'draft' ? (
          <button type="button" onClick={publish} disabled={busy}>
            Publish
          </button>
        ) : null}
      </div>
      {listing.source === 'hosted' ? (
        <div class="inline-form">
          <label for="licence">Commit a licence</label>
          <select id="licence" value={spdx} onChange={(e) => setSpdx(e.currentTarget.value)}>
            {LICENCES.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
          <button type="button" class="secondary" onClick={licence} disabled={busy}>
            Commit LICENSE to {listing.default_branch ?? 'main'}
          </button>
        </div>
      ) : null}
      <FormNotice form={errors} />
      {message ? (
        <div class="notice good" role="status">
          {message}
        </div>
      ) : null}
      {confirming ? (
        <form
          class="danger-zone"
          onSubmit={(event) => {
            event.preventDefault();
            void retire();
          }}
        >
          <p>
            Retiring <strong>{name}</strong> is final: it stops being sold; holders keep every version they
            own and the release log stays.
          </p>
          <label for="retire-confirm">Type {name} to confirm</label>
          <input id="retire-confirm" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
          <button type="submit" class="danger" disabled={busy || typed !== name}>
            Retire {name}
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" class="danger secondary" onClick={() => setConfirming(true)}>
          Retire…
        </button>
      )}
    </div>
  );
}

/** The fields an edit's refusal may name, in the form's order. */
const DETAILS_FIELDS: Record<string, FormField> = {
  price_micro: { id: 'edit-price', label: 'The price' },
  update_price_micro: { id: 'edit-update-price', label: 'The update price' },
  description: { id: 'edit-description', label: 'The description' },
  trigger_hint: { id: 'edit-hint', label: 'The hint' },
};

function DetailsForm({ listing, done }: { listing: Listing; done: () => Promise<void> }) {
  const holders = useLoad(
    () => api<{ holders: number; updates_included: number }>('GET', `/listings/${listing.id}/holders`),
    `holders-${listing.id}`,
  );
  const [form, setForm] = useState({
    price: dollarsField(listing.pricing.price_micro),
    updatePrice: dollarsField(listing.pricing.update_price_micro),
    description: listing.description,
    hint: listing.trigger_hint,
  });
  const errors = useFormErrors();
  const [saved, setSaved] = useState(false);
  const set = (field: keyof typeof form) => (value: string) => {
    setSaved(false);
    setForm({ ...form, [field]: value });
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const problems = {
      ...pricedProblems([
        { id: 'edit-price', label: 'The price', typed: form.price },
        { id: 'edit-update-price', label: 'The update price', typed: form.updatePrice },
      ]),
      ...wordsProblems('edit-', form),
    };
    if (Object.keys(problems).length > 0) return errors.invalid(problems);
    errors.clear();
    try {
      // The service keeps a description and a hint once given (never empty): an empty field is left as it is.
      const body: Record<string, string> = {};
      if (form.description.trim()) body.description = form.description.trim();
      if (form.hint.trim()) body.trigger_hint = form.hint.trim();
      if (form.price.trim()) body.price_micro = microFromDollars(form.price);
      body.update_price_micro = form.updatePrice.trim() ? microFromDollars(form.updatePrice) : '0';
      await api('PATCH', `/listings/${listing.id}`, body);
      setSaved(true);
      await done();
    } catch (caught) {
      errors.fail(caught, DETAILS_FIELDS);
    }
  };
  return (
    <form class="card" onSubmit={submit} id="details" aria-labelledby="details-heading" noValidate>
      <h2 id="details-heading">Price and description</h2>
      <PriceInput
        id="edit-price"
        label="Price"
        value={form.price}
        onInput={set('price')}
        form={errors}
        help={`Now: ${usd(listing.pricing.price_micro)}. What a first purchase costs; 0 makes it free.`}
      />
      <PriceInput
        id="edit-update-price"
        label="Update price"
        value={form.updatePrice}
        onInput={set('updatePrice')}
        form={errors}
        help={`Now: ${usd(listing.pricing.update_price_micro)}. What a holder pays for a newer version; 0 includes updates.`}
      />
      <IncludedUpdates
        holders={holders.data?.updates_included ?? 0}
        updatePriced={(parseUsd(form.updatePrice.trim() || '0') ?? 0n) > 0n}
      />
      <ListingWordsFields
        idPrefix="edit-"
        description={form.description}
        hint={form.hint}
        descriptionHelp="What it is, for buyers. Needed before publishing."
        onDescription={set('description')}
        onHint={set('hint')}
        form={errors}
      />
      <FormNotice form={errors} />
      {saved ? (
        <div class="notice good" role="status">
          Saved. Prices apply to future purchases.
        </div>
      ) : null}
      <button type="submit">Save</button>
    </form>
  );
}

/**
 * Buyers who paid while updates were included keep them: said beside the update price while it is
 * set above zero, so the creator knows who will not pay it.
 */
function IncludedUpdates({ holders, updatePriced }: { holders: number; updatePriced: boolean }) {
  if (!updatePriced || holders === 0) return null;
  return (
    <p class="notice" role="note">
      {holders === 1 ? '1 holder' : `${holders} holders`} bought while updates were included:{' '}
      {holders === 1 ? 'it receives' : 'they receive'} every later version free, whatever the update price.
    </p>
  );
}

/**
 * `previous`: the version before this one; null when this is the first release, undefined when the
 * page has not loaded that far.
 */
function ReleaseItem({
  release,
  open,
  previous,
}: {
  release: ListingRelease;
  open: boolean;
  previous: string | null | undefined;
}) {
  return (
    <li class="release" id={`release-${release.version}`}>
      <details open={open}>
        <summary>
          <strong>{release.version}</strong> <Verdict verdict={release.scan} />{' '}
          <span class="muted small">
            {release.tag} · {shortHex(release.commit_sha, 5)} · {when(release.published_at)} ·{' '}
            {release.price_micro === null ? 'priced when published' : usd(release.price_micro)}
          </span>
        </summary>
        {release.changelog ? <pre class="changelog">{release.changelog}</pre> : null}
        {release.diff_summary ? <ChangeSummary diff={release.diff_summary} previous={previous} /> : null}
        {release.artifact_sha256 ? (
          <p class="muted small">
            Zip SHA-256 <code>{release.artifact_sha256}</code>
          </p>
        ) : null}
        <ScanReportView report={release.scan_report} />
      </details>
    </li>
  );
}

function ChangeSummary({
  diff,
  previous,
}: {
  diff: NonNullable<ListingRelease['diff_summary']>;
  previous: string | null | undefined;
}) {
  if (previous === null) {
    return <p class="muted small">The first release: {plural(diff.files_added, 'file')}.</p>;
  }
  return (
    <p class="muted small">
      Since {previous ?? 'the previous release'}: {diff.files_added} added, {diff.files_changed} changed,{' '}
      {diff.files_removed} removed.
    </p>
  );
}

/** What the releases list shows, as the listing document names it: changes when a release comes or changes. */
function releaseSignature(listing: Listing | undefined): string {
  if (!listing) return '';
  // A pending release's stage too: the progress shown is read from the releases.
  const release = (r: ListingRelease | null | undefined) =>
    r ? `${r.version}:${r.scan}:${r.stage?.name ?? ''}` : '';
  const cuts = (listing.cuts ?? []).map((cut) => `${cut.version}:${cut.state}`);
  return JSON.stringify([release(listing.latest_release), release(listing.newest_release), cuts]);
}

/** The manifest as buyers see it (or will, once published): the service's own document. */
function ManifestPreview({ listing }: { listing: Loaded<Listing> }) {
  const data = listing.data;
  const id = data?.id ?? '';
  // Reloaded whenever something the manifest shows changes: the release on sale, prices, words, licence, status.
  const shown = JSON.stringify([
    data?.latest_release?.version,
    data?.latest_release?.scan,
    data?.pricing,
    data?.description,
    data?.trigger_hint,
    data?.licence,
    data?.status,
  ]);
  const manifest = useLoad(
    () => api<Record<string, unknown>>('GET', `/listings/${id}/manifest`),
    `manifest-${id}-${shown}`,
  );
  return (
    <section class="card" id="manifest" aria-labelledby="manifest-heading">
      <h2 id="manifest-heading">The manifest buyers see</h2>
      {manifest.data ? (
        <>
          <ManifestSummary manifest={manifest.data} licence={data?.licence ?? null} />
          <details>
            <summary>Full manifest (JSON)</summary>
            <pre class="json">{JSON.stringify(manifest.data, null, 2)}</pre>
          </details>
        </>
      ) : manifest.error instanceof ApiError &&
        (manifest.error.status === 404 || manifest.error.status === 409) ? (
        // Not an error to alarm anyone: the manifest exists once a release passes and a price is set.
        <p class="muted" id="manifest-pending">
          {manifest.error.status === 404
            ? 'Buyers will see it once a release passes its security scan: push a version tag, then look here again.'
            : 'Buyers will see it once the listing has a price: set one in Price and description.'}
        </p>
      ) : manifest.error ? (
        <ErrorNotice error={manifest.error} />
      ) : (
        <p>Loading…</p>
      )}
    </section>
  );
}

function ManifestSummary({
  manifest,
  licence,
}: {
  manifest: Record<string, unknown>;
  licence: string | null;
}) {
  const computed = (manifest.computed ?? {}) as {
    inventory_sentence?: string;
    licence?: { spdx: string; verdict: string };
    scan?: { verdict: string; capabilities?: { summary?: string } };
    file_count?: number;
  };
  return (
    <dl class="facts">
      <dt>Version on sale</dt>
      <dd>{String(manifest.version ?? '—')}</dd>
      <dt>What it is</dt>
      <dd>{computed.inventory_sentence ?? '—'}</dd>
      <dt>Licence</dt>
      <dd>
        {computed.licence ? `${computed.licence.spdx} (${computed.licence.verdict})` : '—'}
        {licence && computed.licence?.spdx !== licence ? (
          <span class="muted small">
            {' '}
            · {licence} is on your branch: the next version you tag carries it.
          </span>
        ) : null}
      </dd>
      <dt>Scan</dt>
      <dd>
        {computed.scan ? <Verdict verdict={computed.scan.verdict} /> : '—'}{' '}
        {computed.scan?.capabilities?.summary}
      </dd>
    </dl>
  );
}

/**
 * Sync with nothing to cut, in the words of this page's one button (the API's text names fields
 * the page does not have): either every version tag is cut already, or there is none yet.
 */
function nothingToSync(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.body.code === 'version_exists') {
    return new Error('Every version tag is cut already. Tag a new version (v1.2.0, say) and push it.');
  }
  if (error.body.code === 'invalid_request') {
    return new Error(
      'The repository has no version tag yet. Tag a commit (git tag v1.0.0) and push it with --tags: it is cut by itself.',
    );
  }
  return error;
}
