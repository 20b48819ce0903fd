import { ApiError } from '../api.js';

/** A failure as the service worded it: its message, its code linked to the docs, the fields at fault. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  if (!(error instanceof ApiError)) {
    return (
      <div class="notice bad" role="alert">
        {error instanceof Error ? error.message : String(error)}
      </div>
    );
  }
  const { code, message, docs_url: docsUrl, details } = error.body;
  return (
    <div class="notice bad" role="alert">
      <p>{message}</p>
      {details?.issues?.length ? (
        <ul>
          {details.issues.map((issue) => (
            <li key={issue.field}>
              <code>{issue.field}</code>: {issue.reason}
            </li>
          ))}
        </ul>
      ) : null}
      <p class="muted small">
        {docsUrl ? (
          <a href={docsUrl} target="_blank" rel="noopener">
            What <code>{code}</code> means
          </a>
        ) : (
          <code>{code}</code>
        )}
      </p>
    </div>
  );
}
