import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ErrorNotice } from '../components/error-notice.js';
import { ListingWordsFields } from '../components/listing-words-fields.js';
import { MoreButton } from '../components/more-button.js';
import { microFromDollars, PriceInput } from '../components/price-fields.js';
import { Verdict } from '../components/scan-report.js';
import { TableScroll } from '../components/table-scroll.js';
import { usd, when } from '../format.js';
import type { Listing } from '../listing-types.js';
import { navigate } from '../router.js';
import { usePaged } from '../use-load.js';

/** The creator's listings, newest first, and the way to create a hosted one. */
export function ListingsPage() {
  const listings = usePaged(async (cursor) => {
    const page = await api<{ listings: Listing[]; next_cursor: string | null }>(
      'GET',
      `/listings${query({ cursor, limit: 50 })}`,
    );
    return { items: page.listings, next: page.next_cursor };
  }, 'listings');
  return (
    <section>
      <div class="title-row">
        <h1>Listings</h1>
        <a class="button" href="/app/listings/new">
          New listing
        </a>
      </div>
      <ErrorNotice error={listings.error} />
      {listings.loading ? (
        <p>Loading…</p>
      ) : listings.items.length === 0 ? (
        listings.error ? null : (
          <p>
            No listings yet. <a href="/app/listings/new">Create your first</a>: you push a repository and tag
            a version; once a release passes its scan and the listing has a price and a description, you
            publish it.
          </p>
        )
      ) : (
        <TableScroll label="Your listings">
          <table>
            <thead>
              <tr>
                <th scope="col">Listing</th>
                <th scope="col">Status</th>
                <th scope="col">Price</th>
                <th scope="col">On sale</th>
                <th scope="col">Newest release</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {listings.items.map((listing) => (
                <tr key={listing.id}>
                  <td>
                    <a href={`/app/listings/${listing.id}`}>{listing.slug}</a>
                    <span class="muted small"> · {listing.source}</span>
                  </td>
                  <td>
                    <span class={`badge status-${listing.status}`}>{listing.status}</span>
                  </td>
                  <td>{usd(listing.pricing.price_micro)}</td>
                  <td>{listing.latest_release?.version ?? '—'}</td>
                  <td>
                    <NewestRelease listing={listing} />
                  </td>
                  <td>{when(listing.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <MoreButton more={listings.more} />
    </section>
  );
}

/** The newest release of any verdict: `newest_release` is sent only when it is not the one on sale. */
function NewestRelease({ listing }: { listing: Listing }) {
  const newest = listing.newest_release ?? listing.latest_release;
  if (!newest) return <>—</>;
  return (
    <>
      {newest.version} <Verdict verdict={newest.scan} />
    </>
  );
}

export function NewListingPage() {
  const [form, setForm] = useState({
    slug: '',
    key: '',
    price: '',
    updatePrice: '',
    description: '',
    hint: '',
  });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const set = (field: keyof typeof form) => (value: string) => setForm({ ...form, [field]: value });

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body: Record<string, string> = {
        source: 'hosted',
        slug: form.slug.trim(),
        ssh_public_key: form.key.trim(),
      };
      if (form.price.trim()) body.price_micro = microFromDollars(form.price, 'Price');
      if (form.updatePrice.trim())
        body.update_price_micro = microFromDollars(form.updatePrice, 'Update price');
      if (form.description.trim()) body.description = form.description.trim();
      if (form.hint.trim()) body.trigger_hint = form.hint.trim();
      const created = await api<Listing>('POST', '/listings', body);
      navigate(`/app/listings/${created.id}`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="narrow">
      <h1>New hosted listing</h1>
      <p>
        repo402 hosts the repository: you push to it over SSH with the key below, and every{' '}
        <code>vX.Y.Z</code> tag you push becomes a release.
      </p>
      <ErrorNotice error={error} />
      <form onSubmit={submit}>
        <label for="slug">Name</label>
        <input
          id="slug"
          required
          minLength={3}
          maxLength={39}
          pattern="[a-z0-9]+(-[a-z0-9]+)*"
          aria-describedby="slug-help"
          value={form.slug}
          onInput={(e) => set('slug')(e.currentTarget.value)}
        />
        <p id="slug-help" class="muted small">
          The listing's name in URLs: lower-case letters, digits and single hyphens.
        </p>
        <label for="ssh-key">SSH public key</label>
        <textarea
          id="ssh-key"
          class="mono"
          required
          rows={3}
          placeholder="ssh-ed25519 AAAA… you@laptop"
          aria-describedby="ssh-key-help"
          value={form.key}
          onInput={(e) => set('key')(e.currentTarget.value)}
        />
        <p id="ssh-key-help" class="muted small">
          The contents of your <code>~/.ssh/id_ed25519.pub</code> (or another public key): the only key that
          can push to this listing.
        </p>
        <PriceInput
          id="price"
          label="Price"
          value={form.price}
          onInput={set('price')}
          help="What a first purchase costs. Leave empty to set it before publishing; 0 makes it free."
        />
        <PriceInput
          id="update-price"
          label="Update price"
          value={form.updatePrice}
          onInput={set('updatePrice')}
          help="What a holder of an earlier version pays for a newer one; empty or 0 includes updates."
        />
        <ListingWordsFields
          idPrefix=""
          description={form.description}
          hint={form.hint}
          descriptionHelp="What it is, for buyers. Needed before publishing; you can add it later."
          onDescription={set('description')}
          onHint={set('hint')}
        />
        <button type="submit" disabled={busy}>
          Create listing
        </button>
      </form>
    </section>
  );
}
