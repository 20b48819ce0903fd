/**
 * Who is signed in: the key every API call carries. Kept in sessionStorage (this tab only, gone
 * when it closes), never localStorage: a web session key lives 12 hours, and a pasted agent key
 * should not outlive the tab it was pasted into.
 */

export interface Session {
  key: string;
  /** `session`: from a wallet signature, revoked on sign-out; `api_key`: an agent key pasted or just issued. */
  kind: 'session' | 'api_key';
  handle: string;
  /** Web sessions end at this instant; agent keys have no expiry. */
  expiresAt: string | null;
}

const STORAGE_KEY = 'repo402.session';

type Listener = () => void;
const listeners = new Set<Listener>();
let current: Session | undefined = read();
/** Why the last session ended, shown on the sign-in page. */
let endedBecause: string | undefined;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

function read(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    return raw ? (JSON.parse(raw) as Session) : undefined;
  } catch {
    return undefined;
  }
}

function changed() {
  if (expiryTimer) clearTimeout(expiryTimer);
  if (current?.expiresAt) {
    const left = Date.parse(current.expiresAt) - Date.now();
    // setTimeout holds at most ~24.8 days; a web session lives 12 hours.
    expiryTimer = setTimeout(
      () => endSession('Your 12-hour session expired. Sign in again.'),
      Math.max(left, 0),
    );
  }
  for (const listener of listeners) listener();
}

export function session(): Session | undefined {
  return current;
}

export function startSession(next: Session): void {
  current = next;
  endedBecause = undefined;
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  changed();
}

/** Forgets the key; `reason` is shown on the sign-in page (expired, revoked, signed out). */
export function endSession(reason?: string): void {
  current = undefined;
  endedBecause = reason;
  sessionStorage.removeItem(STORAGE_KEY);
  changed();
}

export function sessionEndReason(): string | undefined {
  return endedBecause;
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

changed();
