import { useEffect, useState } from 'preact/hooks';
import { compareVersions } from '../../platform/versions.js';
import { answerError, callApi, query } from '../api.js';
import { TestMoney } from './faucet.js';
import { ListingPurchase } from './listing-purchase.js';
import { ownedVersion, type Release, startDownload } from './purchase.js';
import { type Connected, WalletGate } from './wallet-gate.js';
import type { PageChain } from './wallets.js';
import { buyerErrorText, dollars, shortAddress } from './words.js';

interface Entitlement {
  owner: string;
  slug: string;
  version: string;
  all_versions: boolean;
  acquired_at: string;
}

interface VersionStatus {
  version: string;
  status: 'published' | 'retired';
  for_sale: boolean;
  update_price_micro: string;
  price_kind?: 'owned' | 'new' | 'update' | 'free';
  update?: { from: string; to: string; releases: Release[] };
}

/** One listing in the library: the versions the wallet owns, and the listing as it stands now. */
interface Shelf {
  owner: string;
  slug: string;
  versions: string[];
  allVersions: boolean;
  status?: VersionStatus;
}

interface Setting {
  devnet: boolean;
  chain: PageChain;
  explorer?: string;
}

/** The library at /library: every listing and version the connected wallet owns. */
export function Library(setting: Setting) {
  return (
    <WalletGate devnet={setting.devnet} chain={setting.chain} purpose="Open your library">
      {(connected, disconnect) => (
        <>
          <p class="muted">
            The library of <code title={connected.address}>{shortAddress(connected.address)}</code> (
            {connected.wallet.name}).{' '}
            <button type="button" class="link" onClick={disconnect}>
              Disconnect
            </button>
          </p>
          {connected.wallet.test ? <TestMoney connected={connected} onFunded={() => {}} /> : null}
          <Shelves connected={connected} setting={setting} />
        </>
      )}
    </WalletGate>
  );
}

/** Adds a page of entitlements to the shelves, one per listing, newest holding first. */
function shelve(shelves: Shelf[], items: Entitlement[]): Shelf[] {
  const next = shelves.map((shelf) => ({ ...shelf, versions: [...shelf.versions] }));
  for (const item of items) {
    let shelf = next.find((candidate) => candidate.owner === item.owner && candidate.slug === item.slug);
    if (!shelf) {
      shelf = { owner: item.owner, slug: item.slug, versions: [], allVersions: false };
      next.push(shelf);
    }
    if (!shelf.versions.includes(item.version)) shelf.versions.push(item.version);
    shelf.allVersions ||= item.all_versions;
  }
  return next;
}

function Shelves({ connected, setting }: { connected: Connected; setting: Setting }) {
  const [shelves, setShelves] = useState<Shelf[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string>();
  const headers = { 'x-wallet-signature': connected.session };

  async function loadPage(after?: string) {
    setLoading(true);
    setError(undefined);
    try {
      const answer = await callApi('GET', `/entitlements${query({ cursor: after })}`, { headers });
      if (answer.status !== 200) throw answerError(answer);
      const page = answer.body as { items: Entitlement[]; next_cursor: string | null };
      setShelves((current) => shelve(current, page.items));
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(buyerErrorText(failure));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => {
    void loadPage();
  }, [connected.address]);

  return (
    <div>
      {shelves.length === 0 && !loading && !error ? (
        <p>This wallet owns nothing here yet. What it buys appears here, free to download again.</p>
      ) : null}
      {shelves.map((shelf) => (
        <ShelfCard
          key={`${shelf.owner}/${shelf.slug}`}
          shelf={shelf}
          connected={connected}
          setting={setting}
        />
      ))}
      {error ? (
        <p class="notice" role="alert">
          {error}
        </p>
      ) : null}
      {loading ? <p role="status">Reading what this wallet owns…</p> : null}
      {cursor && !loading ? (
        <p>
          <button type="button" onClick={() => loadPage(cursor)}>
            Show more
          </button>
        </p>
      ) : null}
    </div>
  );
}

function ShelfCard({ shelf, connected, setting }: { shelf: Shelf; connected: Connected; setting: Setting }) {
  const name = `${shelf.owner}/${shelf.slug}`;
  const [status, setStatus] = useState<VersionStatus>();
  const [said, setSaid] = useState<{ text: string; refused?: boolean }>();
  const [buying, setBuying] = useState(false);

  useEffect(() => {
    callApi('GET', `/v/${encodeURIComponent(shelf.owner)}/${encodeURIComponent(shelf.slug)}`, {
      headers: { 'x-wallet-signature': connected.session },
    }).then(
      (answer) => (answer.status === 200 ? setStatus(answer.body as VersionStatus) : undefined),
      () => undefined,
    );
  }, [name]);

  async function download(version: string) {
    setSaid(undefined);
    try {
      const grant = await ownedVersion(shelf.owner, shelf.slug, version, connected.session);
      startDownload(grant, shelf.slug);
      setSaid({ text: `Downloading version ${version}: check your browser's downloads.` });
    } catch (error) {
      setSaid({ text: buyerErrorText(error), refused: true });
    }
  }

  const versions = [...shelf.versions].sort(compareVersions).reverse();
  const update = status?.price_kind === 'update' ? status.update : undefined;
  return (
    <section class="card shelf" aria-label={name}>
      <h2>
        <a href={`/${name}`}>{name}</a>
      </h2>
      {status?.status === 'retired' ? <p class="muted">No longer sold; what you own stays yours.</p> : null}
      <ul class="owned-versions">
        {versions.map((version) => (
          <li key={version}>
            Version <strong>{version}</strong>{' '}
            <button type="button" onClick={() => download(version)}>
              Download {version}
            </button>
          </li>
        ))}
      </ul>
      {said ? (
        <p class={said.refused ? 'notice' : undefined} role={said.refused ? 'alert' : 'status'}>
          {said.text}
        </p>
      ) : null}
      {update ? (
        <div class="update">
          {buying ? (
            // The offer says what the update costs and what changed.
            <ListingPurchase
              listing={{
                owner: shelf.owner,
                slug: shelf.slug,
                explorer: setting.explorer,
                devnet: setting.devnet,
                chain: setting.chain,
              }}
              connected={connected}
            />
          ) : (
            <>
              <p>
                Version <strong>{update.to}</strong> is out: the update from {update.from} costs{' '}
                <strong>{dollars(status!.update_price_micro)}</strong>.
              </p>
              <ul>
                {update.releases.map((release) => (
                  <li key={release.version}>
                    <strong>{release.version}</strong>: {release.changelog.split('\n')[0]}
                  </li>
                ))}
              </ul>
              <p>
                <button type="button" class="primary" onClick={() => setBuying(true)}>
                  Buy the update to {update.to}
                </button>
              </p>
            </>
          )}
        </div>
      ) : null}
    </section>
  );
}
