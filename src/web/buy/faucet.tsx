import { useState } from 'preact/hooks';
import { answerError, callApi } from '../api.js';
import { usdcBalance } from './purchase.js';
import type { Connected } from './wallet-gate.js';
import { buyerErrorText, dollars } from './words.js';

/** Devnet only: test USDC for the tab's test wallet, from the server's capped faucet. */
export function TestMoney({ connected }: { connected: Connected }) {
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
    } catch (error) {
      setSaid({ text: buyerErrorText(error), refused: true });
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
