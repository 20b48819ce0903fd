import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyBlock } from '../components/copy.js';
import { ErrorNotice } from '../components/error-notice.js';
import { TermsText } from '../components/terms-text.js';
import { navigate } from '../router.js';
import { startSession } from '../session.js';
import { useLoad } from '../use-load.js';
import { type Address, connectWallet, hasWallet, signChallenge } from '../wallet.js';

interface Terms {
  version: string;
  url: string;
  text: string;
}

interface Registered {
  handle: string;
  api_key: string;
  scopes: string[];
}

/** Registration: the terms and their version, an invite, the payout address proved by its signature. */
export function RegisterPage() {
  const terms = useLoad(() => api<Terms>('GET', '/terms'), 'terms');
  const [address, setAddress] = useState<Address>();
  const [form, setForm] = useState({ handle: '', invite: '', abuse: '', accepted: false });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [registered, setRegistered] = useState<Registered>();

  const connect = async () => {
    setError(undefined);
    try {
      setAddress(await connectWallet());
    } catch (caught) {
      setError(caught);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!address || !terms.data) return;
    setBusy(true);
    setError(undefined);
    try {
      const proof = await signChallenge(address, 'address_proof');
      const created = await api<Registered>('POST', '/creators', {
        handle: form.handle.trim(),
        payout_address: address,
        accepted_terms_version: terms.data.version,
        address_proof: proof,
        invite_code: form.invite.trim(),
        abuse_contact: form.abuse.trim(),
      });
      setRegistered(created);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  if (registered) {
    return (
      <section class="narrow">
        <h1>Welcome, {registered.handle}</h1>
        <div class="notice warn" role="alert">
          This is your API key. It is shown <strong>once</strong>: copy it somewhere safe now. Anyone holding
          it can manage your listings.
        </div>
        <CopyBlock text={registered.api_key} label="API key" />
        <p class="muted small">Scopes: {registered.scopes.join(', ')}</p>
        <button
          type="button"
          onClick={() => {
            startSession({
              key: registered.api_key,
              kind: 'api_key',
              handle: registered.handle,
              expiresAt: null,
            });
            navigate('/app/listings', { replace: true });
          }}
        >
          I saved it, continue
        </button>
      </section>
    );
  }

  const set = (field: keyof typeof form) => (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    setForm({ ...form, [field]: input.type === 'checkbox' ? input.checked : input.value });
  };

  return (
    <section class="narrow">
      <h1>Register as a creator</h1>
      <ErrorNotice error={error ?? terms.error} />
      <form onSubmit={submit}>
        <label for="handle">Handle</label>
        <input
          id="handle"
          required
          minLength={3}
          maxLength={39}
          pattern="[a-z0-9]+(-[a-z0-9]+)*"
          aria-describedby="handle-help"
          value={form.handle}
          onInput={set('handle')}
        />
        <p id="handle-help" class="muted small">
          Your name in URLs: lower-case letters, digits and single hyphens, 3–39 characters.
        </p>
        <label for="invite">Invite code</label>
        <input id="invite" required value={form.invite} onInput={set('invite')} />
        <label for="abuse">Abuse contact (e-mail)</label>
        <input id="abuse" type="email" required value={form.abuse} onInput={set('abuse')} />
        <fieldset>
          <legend>Payout address</legend>
          <p class="muted small">
            Sales are paid out in USDC to this address. Its wallet signs to prove it is yours, and signs you
            in later.
          </p>
          {address ? (
            <p>
              <code id="payout-address">{address}</code>
            </p>
          ) : null}
          <button type="button" class="secondary" onClick={connect} disabled={!hasWallet()}>
            {address ? 'Use another account' : 'Connect wallet'}
          </button>
          {hasWallet() ? null : <p class="muted">No browser wallet was found in this browser.</p>}
        </fieldset>
        <fieldset>
          <legend>Creator agreement{terms.data ? `, version ${terms.data.version}` : ''}</legend>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the scrolling terms must be reachable by keyboard. */}
          <section class="terms" tabIndex={0} aria-label="Creator agreement text">
            {terms.data ? <TermsText text={terms.data.text} /> : <p>Loading the terms…</p>}
          </section>
          {terms.data ? (
            <p class="muted small">
              <a href={terms.data.url} target="_blank" rel="noopener">
                The agreement on its own page
              </a>
            </p>
          ) : null}
          <label class="check">
            <input type="checkbox" required checked={form.accepted} onChange={set('accepted')} /> I accept the
            creator agreement{terms.data ? ` (version ${terms.data.version})` : ''}
          </label>
        </fieldset>
        <button type="submit" disabled={busy || !address || !terms.data}>
          Sign and register
        </button>
      </form>
    </section>
  );
}
