import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyBlock } from '../components/copy.js';
import { PageFailed } from '../components/error-notice.js';
import { FieldError, FormNotice, useFormErrors } from '../components/form-errors.js';
import { addressProblem, emailProblem } from '../field-checks.js';
import { checksummed, plural, utc, when } from '../format.js';
import { session, startSession } from '../session.js';
import { useLoad } from '../use-load.js';
import { type Address, connectWallet, signChallenge } from '../wallet.js';
import { WebhooksSection } from './webhooks.js';

interface Creator {
  handle: string;
  payout_address: Address;
  abuse_contact: string;
  accepted_terms_version: string;
  created_at: string;
  pending_changes: Array<{ field: string; value: string; requested_at: string; effective_at: string }>;
}

interface Rotated {
  api_key: string;
  handle: string;
  scopes: string[];
  revoked: { agent_keys: number; web_sessions: number };
}

/** The account: values in force, changes waiting out their 48 hours, and key rotation. */
export function AccountPage() {
  const me = useLoad(() => api<Creator>('GET', '/creators/me'), 'me');
  if (!me.data) return me.error ? <PageFailed what="Your account" error={me.error} /> : <p>Loading…</p>;
  const creator = me.data;
  return (
    <section>
      <h1>Account</h1>
      <dl class="facts">
        <dt>Handle</dt>
        <dd>{creator.handle}</dd>
        <dt>Payout address</dt>
        <dd>
          <code>{checksummed(creator.payout_address)}</code>
        </dd>
        <dt>Abuse contact</dt>
        <dd>{creator.abuse_contact}</dd>
        <dt>Terms accepted</dt>
        <dd>version {creator.accepted_terms_version}</dd>
      </dl>
      <h2>Pending changes</h2>
      {creator.pending_changes.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul id="pending-changes">
          {creator.pending_changes.map((change) => (
            <li key={`${change.field}-${change.requested_at}`}>
              <strong>{change.field === 'payout_address' ? 'Payout address' : 'Abuse contact'}</strong>{' '}
              becomes{' '}
              <code>{change.field === 'payout_address' ? checksummed(change.value) : change.value}</code> on{' '}
              <time dateTime={change.effective_at}>{when(change.effective_at)}</time>{' '}
              <span class="muted">({utc(change.effective_at)})</span>. The current value applies until then;
              the old contact was told.
            </li>
          ))}
        </ul>
      )}
      <AbuseContactChange creator={creator} done={me.reload} />
      <PayoutChange creator={creator} done={me.reload} />
      <KeyRotation creator={creator} />
      <WebhooksSection />
    </section>
  );
}

function AbuseContactChange({ creator, done }: { creator: Creator; done: () => Promise<void> }) {
  const [value, setValue] = useState('');
  const errors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const problem = emailProblem(value);
    if (problem) return errors.invalid({ 'new-abuse': problem });
    setBusy(true);
    errors.clear();
    try {
      await requireAccount(creator.payout_address);
      const stepUp = await signChallenge(creator.payout_address, 'step_up');
      await api('PATCH', '/creators/me', { abuse_contact: value.trim(), step_up: stepUp });
      setValue('');
      await done();
    } catch (caught) {
      errors.fail(caught, { abuse_contact: { id: 'new-abuse', label: 'The abuse contact' } });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="card" noValidate>
      <h2>Change the abuse contact</h2>
      <p class="muted small">Signed by your payout address; it takes effect 48 hours later.</p>
      <label for="new-abuse">New abuse contact</label>
      <input
        id="new-abuse"
        type="email"
        value={value}
        onInput={(e) => {
          errors.edited('new-abuse');
          setValue(e.currentTarget.value);
        }}
        {...errors.inputProps('new-abuse')}
      />
      <FieldError form={errors} id="new-abuse" />
      <FormNotice form={errors} />
      <button type="submit" disabled={busy}>
        Sign and request
      </button>
    </form>
  );
}

function PayoutChange({ creator, done }: { creator: Creator; done: () => Promise<void> }) {
  const [value, setValue] = useState('');
  const [stepUp, setStepUp] = useState<{ nonce: string; signature: string }>();
  const errors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const next = value.trim().toLowerCase() as Address;

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    errors.clear();
    try {
      await work();
    } catch (caught) {
      errors.fail(caught, { payout_address: { id: 'new-payout', label: 'The new payout address' } });
    } finally {
      setBusy(false);
    }
  };
  const signOld = (event: Event) => {
    event.preventDefault();
    const problem = addressProblem(value);
    if (problem) return errors.invalid({ 'new-payout': problem });
    if (next === creator.payout_address.toLowerCase()) {
      return errors.invalid({ 'new-payout': 'That is the payout address in force already.' });
    }
    return run(async () => {
      await requireAccount(creator.payout_address);
      setStepUp(await signChallenge(creator.payout_address, 'step_up', next));
    });
  };
  const signNew = () =>
    run(async () => {
      await requireAccount(next);
      const proof = await signChallenge(next, 'address_proof');
      await api('PATCH', '/creators/me', { payout_address: next, step_up: stepUp, address_proof: proof });
      setStepUp(undefined);
      setValue('');
      await done();
    });

  return (
    <form onSubmit={signOld} class="card" noValidate>
      <h2>Change the payout address</h2>
      <p class="muted small">
        Two signatures: the payout address in force approves, then the new address proves it is yours. It
        takes effect 48 hours later.
      </p>
      <label for="new-payout">New payout address</label>
      <input
        id="new-payout"
        class="mono"
        value={value}
        disabled={stepUp !== undefined}
        onInput={(e) => {
          errors.edited('new-payout');
          setValue(e.currentTarget.value);
        }}
        {...errors.inputProps('new-payout')}
      />
      <FieldError form={errors} id="new-payout" />
      <FormNotice form={errors} />
      {stepUp ? (
        <div role="status">
          <p>
            Approved by <code>{checksummed(creator.payout_address)}</code>. Now select{' '}
            <code>{checksummed(next)}</code> in your wallet, then:
          </p>
          <button type="button" onClick={signNew} disabled={busy}>
            Sign with the new address
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setStepUp(undefined)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="submit" disabled={busy}>
          Sign with the current address
        </button>
      )}
    </form>
  );
}

function KeyRotation({ creator }: { creator: Creator }) {
  const [rotated, setRotated] = useState<Rotated>();
  const errors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const rotate = async () => {
    setBusy(true);
    errors.clear();
    try {
      await requireAccount(creator.payout_address);
      const proof = await signChallenge(creator.payout_address, 'rotate_key');
      const result = await api<Rotated>('POST', '/auth/rotate-key', {
        address: creator.payout_address,
        ...proof,
      });
      // Rotation revoked the key this tab held; carry on with the new one.
      startSession({ key: result.api_key, kind: 'api_key', handle: result.handle, expiresAt: null });
      setRotated(result);
    } catch (caught) {
      errors.fail(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card">
      <h2>Rotate your API key</h2>
      <p class="muted small">
        Issues a new agent key and revokes every other key and signed-in browser of yours at once.
      </p>
      {rotated ? (
        <div id="rotated">
          <div class="notice warn" role="alert">
            Your new API key is shown <strong>once</strong>: copy it now.{' '}
            {plural(rotated.revoked.agent_keys, 'agent key')} and{' '}
            {plural(rotated.revoked.web_sessions, 'browser session')} were revoked.
          </div>
          <CopyBlock text={rotated.api_key} label="new API key" />
        </div>
      ) : (
        <>
          <FormNotice form={errors} />
          <button type="button" onClick={rotate} disabled={busy || session() === undefined}>
            Sign and rotate
          </button>
        </>
      )}
    </div>
  );
}

/** The wallet must have `address` selected to sign for it; say so plainly instead of failing later. */
async function requireAccount(address: Address): Promise<void> {
  const selected = await connectWallet();
  if (selected !== address.toLowerCase()) {
    throw new Error(
      `Your wallet has ${checksummed(selected)} selected. Select ${checksummed(address)} in your wallet, then try again.`,
    );
  }
}
