import { errorText } from '../errors.js';

/** A failure that is not a form's (a page that could not load, an action refused), in the page's words. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <div class="notice bad" role="alert">
      {errorText(error)}
    </div>
  );
}

/** A page whose main document could not be read: a heading saying so, the reason, and a way on. */
export function PageFailed({ what, error }: { what: string; error: unknown }) {
  return (
    <section>
      <h1>{what} could not be shown</h1>
      <ErrorNotice error={error} />
      <p>
        <a href="/app/listings">Back to your listings</a>
      </p>
    </section>
  );
}
