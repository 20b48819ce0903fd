import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { FieldError, FormNotice, useFormErrors } from '../components/form-errors.js';
import { checksummed } from '../format.js';
import { navigate } from '../router.js';
import { sessionEndReason, startSession } from '../session.js';
import { type Address, connectWallet, hasWallet, NO_WALLET, signChallenge } from '../wallet.js';

interface SessionResponse {
  api_key: string;
  handle: string;
  expires_at: string;
}

/** Sign in with the payout address's wallet (a 12-hour session), or with a pasted API key. */
export function SignInPage() {
  const walletErrors = useFormErrors();
  const keyErrors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const [pasted, setPasted] = useState('');
  const [unregistered, setUnregistered] = useState<Address>();
  const reason = sessionEndReason();

  const withWallet = async () => {
    setBusy(true);
    walletErrors.clear();
    setUnregistered(undefined);
    let address: Address | undefined;
    try {
      address = await connectWallet();
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
      // A wallet no creator is paid at is a newcomer, not a failure: offered registration instead.
      if (address && caught instanceof ApiError && caught.body.code === 'not_found') setUnregistered(address);
      else walletErrors.fail(caught);
    } finally {
      setBusy(false);
    }
  };

  const withKey = async (event: Event) => {
    event.preventDefault();
    const key = pasted.trim();
    if (!key) return keyErrors.invalid({ 'api-key': 'Paste your API key here first.' });
    setBusy(true);
    keyErrors.clear();
    try {
      // Tried before it becomes the session, so a wrong key signs nobody out.
      const me = await api<{ handle: string }>('GET', '/creators/me', undefined, key);
      startSession({ key, kind: 'api_key', handle: me.handle, expiresAt: null });
      navigate('/app/listings', { replace: true });
    } catch (caught) {
      if (caught instanceof ApiError && caught.body.code === 'invalid_key') {
        keyErrors.invalid({
          'api-key':
            'This key was not accepted. Check that it was pasted whole; a key stops working when it is rotated, and a web session key when it expires or signs out.',
        });
      } else keyErrors.fail(caught);
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
      <h2>With your wallet</h2>
      <p>Sign a one-time message with your payout address. You stay signed in for 12 hours in this tab.</p>
      {hasWallet() ? (
        <button type="button" onClick={withWallet} disabled={busy}>
          Sign in with wallet
        </button>
      ) : (
        <p class="notice" id="no-wallet">
          {NO_WALLET} Or sign in with an API key below.
        </p>
      )}
      {unregistered ? (
        <div class="notice warn" role="alert" id="unregistered">
          <p>
            No creator is registered with the wallet <code>{checksummed(unregistered)}</code>. Is it the
            wallet you registered with? If not, switch accounts in your wallet and sign in again.
          </p>
          <p>
            New here? <a href="/app/register">Register with this wallet</a>.
          </p>
        </div>
      ) : null}
      <FormNotice form={walletErrors} />
      <h2>With an API key</h2>
      <form onSubmit={withKey} noValidate>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          value={pasted}
          onInput={(event) => {
            keyErrors.edited('api-key');
            setPasted(event.currentTarget.value);
          }}
          {...keyErrors.inputProps('api-key', 'api-key-help')}
        />
        <FieldError form={keyErrors} id="api-key" />
        <p id="api-key-help" class="muted small">
          Kept in this tab only, and forgotten when you sign out or close it.
        </p>
        <FormNotice form={keyErrors} />
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
