import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import {
  type Grant,
  type PaymentRequired,
  PriceChanged,
  pay,
  signPayment,
  standing,
  startDownload,
  usdcBalance,
} from './purchase.js';
import type { Connected } from './wallet-gate.js';
import type { PageChain } from './wallets.js';
import { balanceText, buyerErrorText, dollars, shortAddress } from './words.js';

export interface ListingRef {
  owner: string;
  slug: string;
  /** A transaction's page on the chain's explorer, `{tx}` for the hash; none on the devnet. */
  explorer?: string;
  devnet: boolean;
  /** The chain paid on, as the page names it. */
  chain: PageChain;
}

type State =
  | { step: 'loading' }
  | { step: 'offer'; offer: PaymentRequired; note?: string }
  | { step: 'signing'; offer: PaymentRequired }
  | { step: 'settling'; offer: PaymentRequired; attempt: number }
  | { step: 'granted'; grant: Grant; paid: boolean }
  | { step: 'refused'; message: string; offer?: PaymentRequired };

/**
 * One listing, for a connected wallet: what it would pay (the price, or the update price and what
 * changed since the version it holds), or that it owns the version on sale; the payment, its
 * settlement and the download. Every refusal says what happened and the next step.
 */
export function ListingPurchase({ listing, connected }: { listing: ListingRef; connected: Connected }) {
  const [state, setState] = useState<State>({ step: 'loading' });
  const name = `${listing.owner}/${listing.slug}`;

  async function look(note?: string) {
    setState({ step: 'loading' });
    try {
      const now = await standing(listing.owner, listing.slug, connected.session);
      if (now.kind === 'grant') setState({ step: 'granted', grant: now.grant, paid: false });
      else if (now.kind === 'offer') setState({ step: 'offer', offer: now.offer, note });
      else setState({ step: 'refused', message: buyerErrorText(now.error) });
    } catch (error) {
      setState({ step: 'refused', message: buyerErrorText(error) });
    }
  }
  useEffect(() => {
    void look();
  }, [connected.address]);

  // A quote holds until its valid_before: past it, the page asks for a fresh one by itself.
  const shownOffer = state.step === 'offer' ? state.offer : undefined;
  useEffect(() => {
    if (!shownOffer) return;
    const wait = Date.parse(shownOffer.extra.valid_before) - Date.now();
    const timer = setTimeout(
      () => void look('The quote expired, so the page asked for a fresh one.'),
      Math.max(wait, 1000),
    );
    return () => clearTimeout(timer);
  }, [shownOffer]);

  async function buy(offer: PaymentRequired) {
    setState({ step: 'signing', offer });
    try {
      const payment = await signPayment(connected.wallet, connected.address, offer);
      setState({ step: 'settling', offer, attempt: 0 });
      const grant = await pay(listing.owner, listing.slug, payment, connected.session, (attempt) =>
        setState({ step: 'settling', offer, attempt }),
      );
      setState({ step: 'granted', grant, paid: true });
      startDownload(grant, listing.slug);
    } catch (error) {
      if (error instanceof PriceChanged) {
        setState({
          step: 'offer',
          offer: error.offer,
          note: `The price changed while you were paying: it is now ${dollars(error.offer.accepts[0]!.amount)}. Nothing was charged; pay again at the new price, or leave it.`,
        });
        return;
      }
      setState({ step: 'refused', message: await refusalText(error, offer), offer });
    }
  }

  async function refusalText(error: unknown, offer: PaymentRequired): Promise<string> {
    if (error instanceof ApiError && error.body.code === 'insufficient_balance') {
      const accepted = offer.accepts[0]!;
      try {
        const balance = await usdcBalance(connected.wallet, connected.address, accepted.asset);
        const text = balanceText(balance, BigInt(accepted.amount), listing.devnet, listing.chain.name);
        return listing.devnet ? `${text} “Get test USDC” adds some.` : text;
      } catch {
        // The balance could not be read: the refusal alone says what to do.
      }
    }
    return buyerErrorText(error);
  }

  // Where the person's attention goes: what to do next after each answer (keyboard and screen reader alike).
  const region = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (state.step !== 'loading') region.current?.focus({ preventScroll: false });
  }, [state.step]);

  return (
    <div ref={region} tabIndex={-1} class="purchase">
      {stateView()}
    </div>
  );

  function stateView() {
    switch (state.step) {
      case 'loading':
        return <p role="status">Checking what {shortAddress(connected.address)} already owns…</p>;
      case 'offer':
        return (
          <Offer
            offer={state.offer}
            note={state.note}
            connected={connected}
            listing={listing}
            onBuy={() => buy(state.offer)}
          />
        );
      case 'signing':
        return (
          <p role="status" class="checkout-status">
            Confirm the payment of {dollars(state.offer.accepts[0]!.amount)} in {connected.wallet.name}.
          </p>
        );
      case 'settling':
        return (
          <div role="status" class="checkout-status">
            <p>
              Payment signed. Waiting for it to settle on {listing.chain.name}
              {state.attempt > 0 ? ` (still settling, check ${state.attempt})` : ''}…
            </p>
            <progress aria-label="Settling the payment" />
            <p class="muted">
              Leaving or reloading is safe: the same payment is never charged twice, and once it settles your
              library has it.
            </p>
          </div>
        );
      case 'granted':
        return <Granted grant={state.grant} paid={state.paid} listing={listing} name={name} />;
      case 'refused':
        return (
          <div>
            <p class="notice" role="alert">
              {state.message}
            </p>
            <p>
              <button type="button" onClick={() => void look()}>
                Try again
              </button>
            </p>
          </div>
        );
    }
  }
}

function Offer({
  offer,
  note,
  connected,
  listing,
  onBuy,
}: {
  offer: PaymentRequired;
  note?: string;
  connected: Connected;
  listing: ListingRef;
  onBuy: () => void;
}) {
  const accepted = offer.accepts[0]!;
  const validUntil = new Date(offer.extra.valid_before);
  const update = offer.extra.kind === 'update';
  return (
    <div class="offer">
      {note ? (
        <p class="notice" role="alert">
          {note}
        </p>
      ) : null}
      {update ? (
        <>
          <p>
            This wallet owns version <strong>{offer.extra.from}</strong>. The update to{' '}
            <strong>{offer.extra.to}</strong> costs <strong>{dollars(accepted.amount)}</strong>.
          </p>
          <ChangesSince releases={offer.extra.releases ?? []} />
        </>
      ) : (
        <p>
          Version <strong>{offer.extra.version}</strong> for <strong>{dollars(accepted.amount)}</strong>.
        </p>
      )}
      <dl class="offer-terms">
        <dt>Amount</dt>
        <dd>{dollars(accepted.amount)} USDC</dd>
        <dt>Paid to</dt>
        <dd>
          <code title={accepted.payTo}>{shortAddress(accepted.payTo)}</code>
        </dd>
        <dt>Network</dt>
        <dd>
          {listing.devnet
            ? `${listing.chain.name}, as this devnet imitates it (test money)`
            : listing.chain.name}
        </dd>
        <dt>Price held until</dt>
        <dd>
          <time dateTime={validUntil.toISOString()}>{validUntil.toLocaleTimeString()}</time>
        </dd>
        <dt>From</dt>
        <dd>
          <code title={connected.address}>{shortAddress(connected.address)}</code> ({connected.wallet.name})
        </dd>
      </dl>
      <p>
        <button type="button" class="primary" onClick={onBuy}>
          Pay {dollars(accepted.amount)}
        </button>
      </p>
      <p class="muted">
        Your wallet signs a USDC transfer of exactly this amount to this address; nothing else can be taken
        with it. After it settles, every version you own stays free to download again from your library.
      </p>
    </div>
  );
}

function ChangesSince({
  releases,
}: {
  releases: Array<{ version: string; changelog: string; scan: string }>;
}) {
  if (releases.length === 0) return null;
  return (
    <details class="changes" open={releases.length <= 3}>
      <summary>What changed ({releases.length === 1 ? '1 release' : `${releases.length} releases`})</summary>
      <ul>
        {releases.map((release) => (
          <li key={release.version}>
            <strong>{release.version}</strong>
            {release.scan === 'pass' ? '' : ` (scan: ${release.scan}, not sold)`}:{' '}
            {release.changelog.split('\n')[0]}
          </li>
        ))}
      </ul>
    </details>
  );
}

function Granted({
  grant,
  paid,
  listing,
  name,
}: {
  grant: Grant;
  paid: boolean;
  listing: ListingRef;
  name: string;
}) {
  const transaction = grant.transaction;
  const explorer =
    transaction && listing.explorer ? listing.explorer.replace('{tx}', transaction) : undefined;
  return (
    <div class="granted" role="status">
      <p class="success">
        {paid
          ? `Paid. Version ${grant.version} is yours and its download has started.`
          : grant.kind === 'free'
            ? `Version ${grant.version} is free.`
            : `You own version ${grant.version}.`}
      </p>
      <p>
        <button type="button" class="primary" onClick={() => startDownload(grant, listing.slug)}>
          {paid ? 'Download again' : `Download ${grant.version} (free)`}
        </button>
      </p>
      {transaction ? (
        <p>
          Transaction:{' '}
          {explorer ? (
            <a href={explorer} rel="noopener noreferrer">
              <code>{shortAddress(transaction)}</code>
            </a>
          ) : (
            <code title={transaction}>{shortAddress(transaction)}</code>
          )}
          {listing.devnet ? ` (on this devnet’s test chain, not on ${listing.chain.name})` : ''}
        </p>
      ) : null}
      <p>
        Check the zip is what was scanned: its SHA-256 is <code class="hash">{grant.artifact_sha256}</code>,
        and its <a href={grant.attestation_url}>signed attestation</a> names the commit and the scan. Run{' '}
        <code>
          repo402 verify --expect {name}@{grant.version}
        </code>{' '}
        on the download, or follow <a href="/docs/buying">Buying</a>, section 4.
      </p>
    </div>
  );
}
