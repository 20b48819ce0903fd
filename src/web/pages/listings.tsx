import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ErrorNotice } from '../components/error-notice.js';
import { FieldError, FormNotice, useFormErrors } from '../components/form-errors.js';
import { type GitHubChoice, GitHubRepoPicker } from '../components/github-repo-picker.js';
import { ListingWordsFields, wordsProblems } from '../components/listing-words-fields.js';
import { MoreButton } from '../components/more-button.js';
import { Notices } from '../components/notices.js';
import { microFromDollars, PriceInput, pricedProblems } from '../components/price-fields.js';
import { Verdict } from '../components/scan-report.js';
import { TableScroll } from '../components/table-scroll.js';
import type { FormField } from '../errors.js';
import { nameProblem } from '../field-checks.js';
import { usd, when } from '../format.js';
import type { Listing } from '../listing-types.js';
import { navigate } from '../router.js';
import { usePaged } from '../use-load.js';

/** The creator's listings, newest first, and the way to create one. */
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
      <Notices />
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

/** The fields a new listing's refusal may name, in the form's order. */
const NEW_LISTING_FIELDS: Record<string, FormField> = {
  slug: { id: 'slug', label: 'The name' },
  ssh_public_key: { id: 'ssh-key', label: 'The SSH public key' },
  installation_id: { id: 'github-repo', label: 'The repository' },
  github_repo_id: { id: 'github-repo', label: 'The repository' },
  repo: { id: 'github-repo', label: 'The repository' },
  source: { id: 'github-repo', label: 'GitHub' },
  price_micro: { id: 'price', label: 'The price' },
  update_price_micro: { id: 'update-price', label: 'The update price' },
  description: { id: 'description', label: 'The description' },
  trigger_hint: { id: 'hint', label: 'The hint' },
};

type Source = 'hosted' | 'github';

/** A slug from a repository's name: lower case, runs of anything else made one hyphen. */
function slugFrom(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 39)
    .replace(/-+$/, '');
}

export function NewListingPage() {
  const [source, setSource] = useState<Source>('hosted');
  const [github, setGitHub] = useState<GitHubChoice>();
  const [form, setForm] = useState({
    slug: '',
    key: '',
    price: '',
    updatePrice: '',
    description: '',
    hint: '',
  });
  const errors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const set = (field: keyof typeof form) => (value: string) => setForm({ ...form, [field]: value });

  const choose = (choice: GitHubChoice | undefined) => {
    setGitHub(choice);
    // The repository's name is the likeliest listing name; one the creator typed is kept.
    if (choice && !form.slug.trim()) {
      errors.edited('slug');
      setForm({ ...form, slug: slugFrom(choice.repository.full_name.split('/')[1] ?? '') });
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    // In the form's order: focus goes to the first.
    const problems: Record<string, string> = {};
    if (source === 'github' && !github) problems['github-repo'] = 'Choose the repository to sell.';
    const slug = nameProblem(form.slug, 'A name');
    if (slug) problems.slug = slug;
    if (source === 'hosted' && !form.key.trim()) {
      problems['ssh-key'] = 'Paste the public key that will push to this listing.';
    }
    Object.assign(
      problems,
      pricedProblems([
        { id: 'price', label: 'The price', typed: form.price },
        { id: 'update-price', label: 'The update price', typed: form.updatePrice },
      ]),
      wordsProblems('', form),
    );
    if (Object.keys(problems).length > 0) return errors.invalid(problems);
    setBusy(true);
    errors.clear();
    try {
      const body: Record<string, string | number> =
        source === 'hosted'
          ? { source, slug: form.slug.trim(), ssh_public_key: form.key.trim() }
          : {
              source,
              slug: form.slug.trim(),
              installation_id: github!.installationId,
              github_repo_id: github!.repository.github_repo_id,
            };
      if (form.price.trim()) body.price_micro = microFromDollars(form.price);
      if (form.updatePrice.trim()) body.update_price_micro = microFromDollars(form.updatePrice);
      if (form.description.trim()) body.description = form.description.trim();
      if (form.hint.trim()) body.trigger_hint = form.hint.trim();
      const created = await api<Listing>('POST', '/listings', body);
      navigate(`/app/listings/${created.id}`);
    } catch (caught) {
      errors.fail(caught, NEW_LISTING_FIELDS);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="narrow">
      <h1>New listing</h1>
      <form onSubmit={submit} noValidate>
        <fieldset>
          <legend>Where the code lives</legend>
          <label class="check">
            <input
              type="radio"
              name="source"
              id="source-hosted"
              checked={source === 'hosted'}
              onChange={() => setSource('hosted')}
            />{' '}
            Hosted here: you push the repository to repo402 over SSH
          </label>
          <label class="check">
            <input
              type="radio"
              name="source"
              id="source-github"
              checked={source === 'github'}
              onChange={() => setSource('github')}
            />{' '}
            A private GitHub repository, read through the repo402 GitHub App
          </label>
          <p class="muted small">
            Either way, every <code>vX.Y.Z</code> tag becomes a release, scanned before it can be sold.
          </p>
        </fieldset>
        {source === 'github' ? <GitHubRepoPicker chosen={github} onChoose={choose} form={errors} /> : null}
        <label for="slug">Name</label>
        <input
          id="slug"
          {...errors.inputProps('slug', 'slug-help')}
          value={form.slug}
          onInput={(e) => {
            errors.edited('slug');
            set('slug')(e.currentTarget.value);
          }}
        />
        <FieldError form={errors} id="slug" />
        <p id="slug-help" class="muted small">
          The listing's name in URLs: 3 to 39 lower-case letters, digits and single hyphens.
        </p>
        {source === 'hosted' ? (
          <>
            <label for="ssh-key">SSH public key</label>
            <textarea
              id="ssh-key"
              class="mono"
              rows={3}
              placeholder="ssh-ed25519 AAAA… you@laptop"
              {...errors.inputProps('ssh-key', 'ssh-key-help')}
              value={form.key}
              onInput={(e) => {
                errors.edited('ssh-key');
                set('key')(e.currentTarget.value);
              }}
            />
            <FieldError form={errors} id="ssh-key" />
            <p id="ssh-key-help" class="muted small">
              The contents of your <code>~/.ssh/id_ed25519.pub</code> (or another public key): the only key
              that can push to this listing.
            </p>
          </>
        ) : null}
        <PriceInput
          id="price"
          label="Price"
          value={form.price}
          onInput={set('price')}
          form={errors}
          help="What a first purchase costs. Leave empty to set it before publishing; 0 makes it free."
        />
        <PriceInput
          id="update-price"
          label="Update price"
          value={form.updatePrice}
          onInput={set('updatePrice')}
          form={errors}
          help="What a holder of an earlier version pays for a newer one; empty or 0 includes updates."
        />
        <ListingWordsFields
          idPrefix=""
          description={form.description}
          hint={form.hint}
          descriptionHelp="What it is, for buyers. Needed before publishing; you can add it later."
          onDescription={set('description')}
          onHint={set('hint')}
          form={errors}
        />
        <FormNotice form={errors} />
        <button type="submit" disabled={busy}>
          Create listing
        </button>
      </form>
    </section>
  );
}
