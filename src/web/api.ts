import { endSession, session } from './session.js';

/** The body of every failure on every route (SPEC: code, message, docs_url). */
export interface ApiErrorBody {
  code: string;
  message: string;
  docs_url?: string;
  details?: { issues?: Array<{ field: string; reason: string }> } & Record<string, unknown>;
  retry_after_seconds?: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
}

/**
 * Calls one of the service's public JSON routes with the signed-in key, or with `withKey` (a key
 * being tried at sign-in, not yet anyone's session). A signed-in key the service no longer accepts
 * (expired, revoked by sign-out or rotation) ends the session, which sends the creator back to
 * sign-in with the reason.
 */
export async function api<T>(method: string, path: string, body?: unknown, withKey?: string): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = withKey ?? session()?.key;
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, {
      code: 'network',
      message: 'The service could not be reached. Check your connection and try again.',
    });
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  const error =
    parsed && typeof parsed === 'object' && 'code' in parsed && 'message' in parsed
      ? (parsed as ApiErrorBody)
      : { code: 'internal', message: `The service answered ${response.status} ${response.statusText}` };
  if (response.status === 401 && key && withKey === undefined && session()?.key === key) {
    endSession(
      'You were signed out: the service no longer accepts this key. It expired, or it was revoked by signing out elsewhere or by a key rotation. Sign in again.',
    );
  }
  throw new ApiError(response.status, error);
}

/** `?a=1&b=2` from the defined values, or an empty string. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
