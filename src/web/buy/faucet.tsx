import { useState } from 'preact/hooks';
import { ApiError, answerError, callApi } from '../api.js';
import { waitWords } from '../errors.js';
import { usdcBalance } from './purchase.js';
import type { Connected } from './wallet-gate.js';
import { buyerErrorText, dollars } from './words.js';

function faucetRefusal(error: unknown): string {
  if (error instanceof ApiError && error.body.code === 'rate_limited') {
    return `The faucet has given this wallet, or everyone today, all the test USDC it gives for now. Try again in ${waitWords(error.body.retry_after_seconds ?? 1)}.`;
  }
  return buyerErrorText(error);
}

/** Devnet only: test USDC for the tab's test wallet; `onFunded` once some arrived. */
export function TestMoney({ connected, onFunded }: { connected: Connected; onFunded: () => void }) {
  const [said, setSaid] = useState<{ text: string; refused?: boolean }>();
  const [busy, setBusy] = useState(false);

  async function claim() {
    setBusy(true);
    try {
      const answer = await callApi('POST', '/devnet/faucet', { body: { address: connected.address } });
      if (answer.status !== 201) throw answerError(answer);
      const granted = (answer.body as { amount_micro: string }).amount_micro;
      const balance = await usdcBalance(connected.wallet, connected.address);
      setSaid({ text: `Added ${dollars(granted)} of test USDC: the test wallet holds ${dollars(balance)}.` });
      onFunded();
    } catch (error) {
      setSaid({ text: faucetRefusal(error), refused: true });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="test-money">
      <p>
        <button type="button" onClick={claim} disabled={busy}>
          Get test USDC
        </button>{' '}
        <span class="muted">Test money for this devnet only, a few times a day per wallet.</span>
      </p>
      {said ? (
        <p role={said.refused ? 'alert' : 'status'} class={said.refused ? 'notice' : undefined}>
          {said.text}
        </p>
      ) : null}
    </div>
  );
}
