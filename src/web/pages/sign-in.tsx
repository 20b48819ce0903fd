import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNotice } from '../components/error-notice.js';
import { navigate } from '../router.js';
import { sessionEndReason, startSession } from '../session.js';
import { connectWallet, hasWallet, signChallenge } from '../wallet.js';

interface SessionResponse {
  api_key: string;
  handle: string;
  expires_at: string;
}

/** Sign in with the payout address's wallet (a 12-hour session), or with a pasted API key. */
export function SignInPage() {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [pasted, setPasted] = useState('');
  const reason = sessionEndReason();

  const withWallet = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const address = await connectWallet();
      const proof = await signChallenge(address, 'wallet_ownership');
      const signedIn = await api<SessionResponse>('POST', '/auth/sessions', { address, ...proof });
      startSession({
        key: signedIn.api_key,
        kind: 'session',
        handle: signedIn.handle,
        expiresAt: signedIn.expires_at,
      });
      navigate('/app/listings', { replace: true });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const withKey = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const key = pasted.trim();
    try {
      startSession({ key, kind: 'api_key', handle: '', expiresAt: null });
      const me = await api<{ handle: string }>('GET', '/creators/me');
      startSession({ key, kind: 'api_key', handle: me.handle, expiresAt: null });
      navigate('/app/listings', { replace: true });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="narrow">
      <h1>Sign in</h1>
      {reason ? (
        <div class="notice warn" role="status">
          {reason}
        </div>
      ) : null}
      <ErrorNotice error={error} />
      <h2>With your wallet</h2>
      <p>Sign a one-time message with your payout address. You stay signed in for 12 hours in this tab.</p>
      <button type="button" onClick={withWallet} disabled={busy || !hasWallet()}>
        Sign in with wallet
      </button>
      {hasWallet() ? null : <p class="muted">No browser wallet was found in this browser.</p>}
      <h2>With an API key</h2>
      <form onSubmit={withKey}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={pasted}
          onInput={(event) => setPasted(event.currentTarget.value)}
        />
        <p class="muted small">Kept in this tab only, and forgotten when you sign out or close it.</p>
        <button type="submit" disabled={busy}>
          Sign in with key
        </button>
      </form>
      <p>
        New here? <a href="/app/register">Register as a creator</a>
      </p>
    </section>
  );
}
