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

/** What the service answered: its status and parsed body (undefined when it was not JSON). */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * One request to the service's public JSON routes, whatever it answers: the buyer's pages read a
 * 402 as an offer, not a failure. Only an unreachable service throws.
 */
export async function callApi(
  method: string,
  path: string,
  { headers = {}, body }: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const sent: Record<string, string> = { accept: 'application/json', ...headers };
  if (body !== undefined) sent['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      method,
      headers: sent,
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
  return { status: response.status, body: parsed };
}

/** The failure an answer carries, as the page reports it. */
export function answerError({ status, body }: Answer): ApiError {
  const error =
    body && typeof body === 'object' && 'code' in body && 'message' in body
      ? (body as ApiErrorBody)
      : { code: 'internal', message: `The service answered ${status}` };
  return new ApiError(status, error);
}

/**
 * Calls one of the service's public JSON routes with the signed-in key, or with `withKey` (a key
 * being tried at sign-in, not yet anyone's session). A signed-in key the service no longer accepts
 * (expired, revoked by sign-out or rotation) ends the session, which sends the creator back to
 * sign-in with the reason.
 */
export async function api<T>(method: string, path: string, body?: unknown, withKey?: string): Promise<T> {
  const key = withKey ?? session()?.key;
  const answer = await callApi(method, path, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    body,
  });
  if (answer.status >= 200 && answer.status < 300) return answer.body as T;
  if (answer.status === 401 && key && withKey === undefined && session()?.key === key) {
    endSession(
      'You were signed out: the service no longer accepts this key. It expired, or it was revoked by signing out elsewhere or by a key rotation. Sign in again.',
    );
  }
  throw answerError(answer);
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
