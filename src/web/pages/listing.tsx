import { useCallback, useState } from 'preact/hooks';
import { parseUsd } from '../../platform/money/usd.js';
import { ApiError, api, query } from '../api.js';
import { CopyBlock } from '../components/copy.js';
import { ErrorNotice } from '../components/error-notice.js';
import { ListingWordsFields } from '../components/listing-words-fields.js';
import { MoreButton } from '../components/more-button.js';
import { microFromDollars, PriceInput } from '../components/price-fields.js';
import { ScanReportView, Verdict } from '../components/scan-report.js';
import { dollarsField, shortHex, usd, when } from '../format.js';
import type { Listing, ListingRelease } from '../listing-types.js';
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
  const awaitingFirst =
    !releases.loading && releases.items.length === 0 && (listing.data?.cuts ?? []).length === 0;
  // A cut under way is followed closely; a listing waiting for its first tag, often enough to see
  // the push land; otherwise slowly, so a tag pushed while the page is open still shows up.
  usePoll(listing.data?.status !== 'retired', refresh, working ? 2000 : awaitingFirst ? 3000 : 15_000);

  if (!listing.data) return listing.error ? <ErrorNotice error={listing.error} /> : <p>Loading…</p>;
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
      {data.status !== 'draft' ? (
        <p>
          <a href={`/${data.owner}/${data.slug}`}>Public page</a> ·{' '}
          <a href={`/api/v/${data.owner}/${data.slug}/releases`}>Public release log</a>
        </p>
      ) : null}
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
            <ReleaseItem key={release.version} release={release} open={index === 0} />
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
            {shortHex(cut.commit_sha, 5)}): snapshot queued.
          </p>
        ) : (
          <p key={cut.version} class="bad">
            {cut.version} could not be cut: {cut.failure_reason}
          </p>
        ),
      )}
      {inspecting.map((release) => (
        <p key={release.version}>
          <span class="spinner" aria-hidden="true" /> {release.version}: analysing and scanning.
        </p>
      ))}
      {working ? <p class="muted small">This updates by itself.</p> : null}
    </div>
  );
}

function HostedSetup({ listing, done }: { listing: Listing; done: () => Promise<void> }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const branch = listing.default_branch ?? 'main';
  const commands = `git remote add repo402 ${listing.remote}\ngit push repo402 ${branch} --tags`;
  const replace = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      await api('PUT', `/listings/${listing.id}/ssh-key`, { ssh_public_key: key.trim() });
      setKey('');
      await done();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <details class="card" open={!listing.latest_release && !listing.newest_release}>
      <summary>
        <h2>Push your code</h2>
      </summary>
      <p>From your repository, add repo402 as a remote and push your branch and tags:</p>
      <CopyBlock text={commands} label="push commands" />
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
        <form onSubmit={replace}>
          <ErrorNotice error={error} />
          <label for="replace-key">Replace the deploy key</label>
          <textarea
            id="replace-key"
            class="mono"
            rows={2}
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <button type="submit" class="secondary">
            Replace key
          </button>
        </form>
      ) : null}
    </details>
  );
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
  const [error, setError] = useState<unknown>();
  const [message, setMessage] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [spdx, setSpdx] = useState<string>(LICENCES[0]);
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const name = `${listing.owner}/${listing.slug}`;

  const run = (work: () => Promise<string>) => async () => {
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      setMessage(await work());
      await done();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const sync = run(async () => {
    const cut = await api<{ version: string; tag: string }>('POST', `/listings/${listing.id}/sync`, {});
    return `Release ${cut.version} (${cut.tag}) is being cut.`;
  });
  const publish = run(async () => {
    await api('POST', `/listings/${listing.id}/publish`);
    return 'Published: the listing is on sale.';
  });
  const licence = run(async () => {
    const result = await api<{ committed: boolean; next_step: string }>(
      'POST',
      `/listings/${listing.id}/licence`,
      {
        spdx,
      },
    );
    return result.committed ? `LICENSE committed. ${result.next_step}` : result.next_step;
  });
  const retire = run(async () => {
    await api('DELETE', `/listings/${listing.id}`);
    setConfirming(false);
    return 'Retired: it is no longer sold; holders keep what they own.';
  });

  return (
    <div class="card" id="actions">
      <h2>Actions</h2>
      {message ? (
        <div class="notice good" role="status">
          {message}
        </div>
      ) : null}
      {error ? (
        <div>
          <p>
            <strong>Refused:</strong>
          </p>
          <ErrorNotice error={error} />
        </div>
      ) : null}
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
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const set = (field: keyof typeof form) => (value: string) => {
    setSaved(false);
    setForm({ ...form, [field]: value });
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      // The service keeps a description and a hint once given (never empty): an empty field is left as it is.
      const body: Record<string, string> = {};
      if (form.description.trim()) body.description = form.description.trim();
      if (form.hint.trim()) body.trigger_hint = form.hint.trim();
      if (form.price.trim()) body.price_micro = microFromDollars(form.price, 'Price');
      body.update_price_micro = form.updatePrice.trim()
        ? microFromDollars(form.updatePrice, 'Update price')
        : '0';
      await api('PATCH', `/listings/${listing.id}`, body);
      setSaved(true);
      await done();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <form class="card" onSubmit={submit} id="details" aria-labelledby="details-heading">
      <h2 id="details-heading">Price and description</h2>
      <ErrorNotice error={error} />
      {saved ? (
        <div class="notice good" role="status">
          Saved. Prices apply to future purchases.
        </div>
      ) : null}
      <PriceInput
        id="edit-price"
        label="Price"
        value={form.price}
        onInput={set('price')}
        help={`Now: ${usd(listing.pricing.price_micro)}. What a first purchase costs; 0 makes it free.`}
      />
      <PriceInput
        id="edit-update-price"
        label="Update price"
        value={form.updatePrice}
        onInput={set('updatePrice')}
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
      />
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

function ReleaseItem({ release, open }: { release: ListingRelease; open: boolean }) {
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
        {release.diff_summary ? (
          <p class="muted small">
            Since the previous release: {release.diff_summary.files_added} added,{' '}
            {release.diff_summary.files_changed} changed, {release.diff_summary.files_removed} removed.
          </p>
        ) : null}
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
          {manifest.error.body.message}.
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
