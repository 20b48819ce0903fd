import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyBlock } from '../components/copy.js';
import { PageFailed } from '../components/error-notice.js';
import { FieldError, FormNotice, useFormErrors } from '../components/form-errors.js';
import { when } from '../format.js';
import { useLoad } from '../use-load.js';

interface Subscription {
  id: string;
  url: string;
  events: string[];
  created_at: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
}

/** The creator events, in words (docs/WEBHOOKS.md has each body). */
const EVENTS: Array<{ type: string; words: string }> = [
  { type: 'sale', words: 'A sale: someone bought a version' },
  { type: 'release.cut', words: 'A release was inspected (passing or failing)' },
  { type: 'release.scan_failed', words: 'A release failed its scan' },
  { type: 'listing.suspended', words: 'A listing was suspended by the operator' },
  { type: 'report.received', words: 'Someone reported a listing' },
];

/**
 * The creator's webhooks, on the account page: where repo402 sends signed messages when something
 * happens to their listings, what was sent, and the secret to check them with (shown once).
 */
export function WebhooksSection() {
  const list = useLoad(
    () => api<{ subscriptions: Subscription[] }>('GET', '/creators/me/webhooks'),
    'webhooks',
  );
  const [secret, setSecret] = useState<string>();
  if (!list.data)
    return list.error ? <PageFailed what="Your webhooks" error={list.error} /> : <p>Loading…</p>;
  const remove = async (id: string) => {
    await api('DELETE', `/creators/me/webhooks/${id}`);
    await list.reload();
  };
  return (
    <section aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhooks</h2>
      <p class="muted small">
        repo402 can send a signed message to a URL of yours when something happens to your listings. Your
        server checks each message with the secret shown when you add the URL (see the webhooks guide in the
        docs).
      </p>
      {list.data.subscriptions.length === 0 ? (
        <p class="muted">No webhooks yet.</p>
      ) : (
        <ul id="webhooks">
          {list.data.subscriptions.map((subscription) => (
            <li key={subscription.id}>
              <code>{subscription.url}</code>: {subscription.events.join(', ')}. Added{' '}
              {when(subscription.created_at)}.{' '}
              {subscription.status === 'disabled' ? (
                <strong>Stopped: {subscription.disabled_reason}</strong>
              ) : (
                'Active.'
              )}{' '}
              <button type="button" onClick={() => void remove(subscription.id)}>
                Remove<span class="visually-hidden"> the webhook to {subscription.url}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {secret ? (
        <div class="card">
          <p>
            <strong>Keep this secret now: it is not shown again.</strong> Your server uses it to check that a
            message came from repo402.
          </p>
          <CopyBlock text={secret} label="Webhook signing secret" />
        </div>
      ) : null}
      <AddWebhook
        added={async (created) => {
          setSecret(created);
          await list.reload();
        }}
      />
    </section>
  );
}

function AddWebhook({ added }: { added: (secret: string) => Promise<void> }) {
  const [url, setUrl] = useState('');
  const [chosen, setChosen] = useState<string[]>(['sale']);
  const errors = useFormErrors();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!/^https?:\/\/\S+$/.test(url.trim())) {
      return errors.invalid({ 'webhook-url': 'Enter the address of your server, starting with https://' });
    }
    if (chosen.length === 0) return errors.invalid({ 'webhook-sale': 'Choose at least one kind of message' });
    setBusy(true);
    errors.clear();
    try {
      const created = await api<{ secret: string }>('POST', '/creators/me/webhooks', {
        url: url.trim(),
        events: chosen,
      });
      setUrl('');
      await added(created.secret);
    } catch (caught) {
      errors.fail(caught, { url: { id: 'webhook-url', label: 'The address' } });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} class="card" noValidate>
      <h3>Add a webhook</h3>
      <label for="webhook-url">Your server's address</label>
      <input
        id="webhook-url"
        type="url"
        value={url}
        onInput={(e) => {
          errors.edited('webhook-url');
          setUrl(e.currentTarget.value);
        }}
        {...errors.inputProps('webhook-url')}
      />
      <FieldError form={errors} id="webhook-url" />
      <fieldset>
        <legend>Send a message when</legend>
        {EVENTS.map((event) => (
          <label key={event.type}>
            <input
              id={`webhook-${event.type.replace('.', '-')}`}
              type="checkbox"
              checked={chosen.includes(event.type)}
              onChange={(e) => {
                errors.edited('webhook-sale');
                const on = e.currentTarget.checked;
                setChosen((current) =>
                  on ? [...current, event.type] : current.filter((type) => type !== event.type),
                );
              }}
            />{' '}
            {event.words}
          </label>
        ))}
      </fieldset>
      <FieldError form={errors} id="webhook-sale" />
      <FormNotice form={errors} />
      <button type="submit" disabled={busy}>
        Add webhook
      </button>
    </form>
  );
}
