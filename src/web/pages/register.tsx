import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyBlock } from '../components/copy.js';
import { ErrorNotice } from '../components/error-notice.js';
import { FieldError, FormNotice, useFormErrors } from '../components/form-errors.js';
import { TermsText } from '../components/terms-text.js';
import type { FormField } from '../errors.js';
import { emailProblem, handleProblem } from '../field-checks.js';
import { checksummed } from '../format.js';
import { navigate } from '../router.js';
import { startSession } from '../session.js';
import { useLoad } from '../use-load.js';
import { type Address, connectWallet, hasWallet, NO_WALLET, signChallenge } from '../wallet.js';

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

/** The fields a registration's refusal may name, in the form's order. */
const FIELDS: Record<string, FormField> = {
  handle: { id: 'handle', label: 'The handle' },
  invite_code: { id: 'invite', label: 'The invite code' },
  abuse_contact: { id: 'abuse', label: 'The abuse contact' },
  payout_address: { id: 'connect-wallet', label: 'The payout address' },
  accepted_terms_version: { id: 'accept-terms', label: 'The agreement' },
};

/** What the page can tell before anything is signed or sent, by input id. */
function registrationProblems(
  form: { handle: string; invite: string; abuse: string; accepted: boolean },
  address: Address | undefined,
): Record<string, string> {
  const problems: Record<string, string | undefined> = {
    handle: handleProblem(form.handle),
    invite: form.invite.trim() ? undefined : 'Enter the invite code the operator gave you.',
    abuse: emailProblem(form.abuse),
  };
  if (!address) problems['connect-wallet'] = 'Connect the wallet whose address will receive your payouts.';
  if (!form.accepted) problems['accept-terms'] = 'Read the agreement and tick the box to accept it.';
  return Object.fromEntries(
    Object.entries(problems).filter((entry): entry is [string, string] => !!entry[1]),
  );
}

/** Registration: the terms and their version, an invite, the payout address proved by its signature. */
export function RegisterPage() {
  const terms = useLoad(() => api<Terms>('GET', '/terms'), 'terms');
  const [address, setAddress] = useState<Address>();
  const [form, setForm] = useState({ handle: '', invite: '', abuse: '', accepted: false });
  const errors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const [registered, setRegistered] = useState<Registered>();

  const connect = async () => {
    errors.clear();
    try {
      setAddress(await connectWallet());
    } catch (caught) {
      errors.fail(caught);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!terms.data) return;
    const problems = registrationProblems(form, address);
    if (Object.keys(problems).length > 0 || !address) return errors.invalid(problems);
    setBusy(true);
    errors.clear();
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
      errors.fail(caught, FIELDS);
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
    errors.edited(input.id);
    setForm({ ...form, [field]: input.type === 'checkbox' ? input.checked : input.value });
  };

  return (
    <section class="narrow">
      <h1>Register as a creator</h1>
      <ErrorNotice error={terms.error} />
      <form onSubmit={submit} noValidate>
        <label for="handle">Handle</label>
        <input
          id="handle"
          maxLength={39}
          autoComplete="username"
          value={form.handle}
          onInput={set('handle')}
          {...errors.inputProps('handle', 'handle-help')}
        />
        <FieldError form={errors} id="handle" />
        <p id="handle-help" class="muted small">
          Your name in URLs: lower-case letters, digits and single hyphens, 3–39 characters.
        </p>
        <label for="invite">Invite code</label>
        <input id="invite" value={form.invite} onInput={set('invite')} {...errors.inputProps('invite')} />
        <FieldError form={errors} id="invite" />
        <label for="abuse">Abuse contact (e-mail)</label>
        <input
          id="abuse"
          type="email"
          autoComplete="email"
          value={form.abuse}
          onInput={set('abuse')}
          {...errors.inputProps('abuse', 'abuse-help')}
        />
        <FieldError form={errors} id="abuse" />
        <p id="abuse-help" class="muted small">
          Where reports about your listings are sent. Buyers never see it.
        </p>
        <fieldset>
          <legend>Payout address</legend>
          <p id="payout-help" class="muted small">
            Sales are paid out in USDC to this address. Its wallet signs to prove it is yours, and signs you
            in later.
          </p>
          {address ? (
            <p>
              <code id="payout-address">{checksummed(address)}</code>
            </p>
          ) : null}
          {hasWallet() ? (
            <button
              id="connect-wallet"
              type="button"
              class="secondary"
              onClick={() => {
                errors.edited('connect-wallet');
                void connect();
              }}
              {...errors.inputProps('connect-wallet', 'payout-help')}
            >
              {address ? 'Use another account' : 'Connect wallet'}
            </button>
          ) : (
            <p class="notice" id="no-wallet">
              {NO_WALLET} Without a browser wallet you can still register from the command line, signing with
              any Ethereum tool: the <a href="/docs/selling">selling guide</a> shows how.
            </p>
          )}
          <FieldError form={errors} id="connect-wallet" />
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
            <input
              id="accept-terms"
              type="checkbox"
              checked={form.accepted}
              onChange={set('accepted')}
              {...errors.inputProps('accept-terms')}
            />{' '}
            I accept the creator agreement{terms.data ? ` (version ${terms.data.version})` : ''}
          </label>
          <FieldError form={errors} id="accept-terms" />
        </fieldset>
        <FormNotice form={errors} />
        <button type="submit" disabled={busy || !terms.data}>
          Sign and register
        </button>
      </form>
    </section>
  );
}
