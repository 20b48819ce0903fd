import { api, query } from '../api.js';
import { ErrorNotice } from '../components/error-notice.js';
import { MoreButton } from '../components/more-button.js';
import { SalesChart, type SalesDay } from '../components/sales-chart.js';
import { TableScroll } from '../components/table-scroll.js';
import { checksummed, money, shortHex, when } from '../format.js';
import { useLoad, usePaged } from '../use-load.js';

interface Sale {
  id: string;
  listing: { id: string; owner: string; slug: string };
  buyer: string;
  version: string;
  kind: 'new' | 'update';
  from_version: string | null;
  amount_micro: string;
  fee_micro: string;
  net_micro: string;
  transaction: string | null;
  transaction_url: string | null;
  source: 'http' | 'mcp';
  created_at: string;
}

interface Ledger {
  balance_micro: string;
  credited_micro: string;
  swept_micro: string;
}

interface Payout {
  id: string;
  address: string;
  amount_micro: string;
  state: 'sending' | 'sent' | 'failed';
  transaction: string | null;
  transaction_url: string | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** What sold, what is owed, and what was paid out. */
export function SalesPage() {
  const daily = useLoad(() => api<{ days: SalesDay[] }>('GET', '/creators/me/sales/daily?days=30'), 'daily');
  const ledger = useLoad(() => api<Ledger>('GET', '/creators/me/ledger?limit=1'), 'ledger');
  const sales = usePaged(async (cursor) => {
    const page = await api<{ sales: Sale[]; next_cursor: string | null }>(
      'GET',
      `/creators/me/sales${query({ cursor, limit: 50 })}`,
    );
    return { items: page.sales, next: page.next_cursor };
  }, 'sales');
  const payouts = usePaged(async (cursor) => {
    const page = await api<{ payouts: Payout[]; next_cursor: string | null }>(
      'GET',
      `/creators/me/payouts${query({ cursor, limit: 20 })}`,
    );
    return { items: page.payouts, next: page.next_cursor };
  }, 'payouts');

  return (
    <section>
      <h1>Sales and payouts</h1>
      <ErrorNotice error={ledger.error ?? daily.error} />
      {ledger.data ? (
        <dl class="stats" id="balance">
          <div>
            <dt>Balance</dt>
            <dd class="big">{money(ledger.data.balance_micro)}</dd>
          </div>
          <div>
            <dt>Earned (net of fees)</dt>
            <dd>{money(ledger.data.credited_micro)}</dd>
          </div>
          <div>
            <dt>Paid out</dt>
            <dd>{money(ledger.data.swept_micro)}</dd>
          </div>
        </dl>
      ) : null}
      {daily.data ? <SalesChart days={daily.data.days} /> : null}
      <h2>Sales</h2>
      <ErrorNotice error={sales.error} />
      {sales.loading ? (
        <p>Loading…</p>
      ) : sales.items.length === 0 ? (
        <p class="muted">No sales yet.</p>
      ) : (
        <TableScroll label="Sales">
          <table id="sales">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Listing</th>
                <th scope="col">Buyer</th>
                <th scope="col">Version</th>
                <th scope="col">Kind</th>
                <th scope="col">Amount</th>
                <th scope="col">You get</th>
                <th scope="col">Transaction</th>
                <th scope="col">Via</th>
              </tr>
            </thead>
            <tbody>
              {sales.items.map((sale) => (
                <tr key={sale.id}>
                  <td class="nowrap">{when(sale.created_at)}</td>
                  <td>
                    <a href={`/app/listings/${sale.listing.id}`}>{sale.listing.slug}</a>
                  </td>
                  <td>
                    <code title={checksummed(sale.buyer)}>{shortHex(checksummed(sale.buyer))}</code>
                  </td>
                  <td>{sale.version}</td>
                  <td>{sale.kind === 'update' ? `update from ${sale.from_version ?? '?'}` : 'new'}</td>
                  <td>{money(sale.amount_micro)}</td>
                  <td>{money(sale.net_micro)}</td>
                  <td>
                    <Transaction hash={sale.transaction} url={sale.transaction_url} />
                  </td>
                  <td>{sale.source === 'mcp' ? 'MCP' : 'HTTP'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <MoreButton more={sales.more} />
      <h2>Payouts</h2>
      <p id="payouts-explained">
        Every hour, your whole balance is sent in USDC to your payout address, as one transfer on the chain,
        listed here with its transaction. A new payout address (changed on the Account page) is paid from 48
        hours after the change; until then the address in force is.
      </p>
      <ErrorNotice error={payouts.error} />
      {payouts.items.length === 0 ? (
        <p class="muted">
          {payouts.loading
            ? 'Loading…'
            : ledger.data && BigInt(ledger.data.balance_micro) > 0n
              ? `No payouts yet: your balance of ${money(ledger.data.balance_micro)} goes out within the hour.`
              : 'No payouts yet: the first goes out within an hour of your first sale.'}
        </p>
      ) : (
        <TableScroll label="Payouts">
          <table id="payouts">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">To</th>
                <th scope="col">Amount</th>
                <th scope="col">State</th>
                <th scope="col">Transaction</th>
              </tr>
            </thead>
            <tbody>
              {payouts.items.map((payout) => (
                <tr key={payout.id}>
                  <td class="nowrap">{when(payout.created_at)}</td>
                  <td>
                    <code title={checksummed(payout.address)}>{shortHex(checksummed(payout.address))}</code>
                  </td>
                  <td>{money(payout.amount_micro)}</td>
                  <td>
                    <span class={`badge payout-${payout.state}`}>{payout.state}</span>
                    {payout.error ? <span class="muted small"> {payout.error}</span> : null}
                  </td>
                  <td>
                    <Transaction hash={payout.transaction} url={payout.transaction_url} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <MoreButton more={payouts.more} />
    </section>
  );
}

function Transaction({ hash, url }: { hash: string | null; url: string | null }) {
  if (!hash) return <span class="muted">—</span>;
  return url ? (
    <a href={url} target="_blank" rel="noopener noreferrer" title={hash}>
      <code>{shortHex(hash, 6)}</code>
    </a>
  ) : (
    <code title={hash}>{shortHex(hash, 6)}</code>
  );
}
