import { ERRORS, type ErrorCode } from '../platform/error-catalogue.js';
import { ApiError } from './api.js';
import { declinedInWallet } from './wallet.js';

/** What publishing still needs, in the page's words (`details.blocking`, `details.missing`). */
const MISSING_WORDS: Record<string, string> = {
  passing_release: 'a release that passed its security scan (push a version tag)',
  price: 'a price',
  description: 'a description',
  trigger_hint: 'a “use it when” hint',
};

function list(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * What the page tells a person about `error`: the catalogue's words for its code, with its details
 * filled in; a failure that is not the service's answer (the network, a check of the page's own)
 * says what it is. Never a route, a code or a field name.
 */
export function errorText(error: unknown): string {
  if (declinedInWallet(error)) return 'You declined the request in your wallet, so nothing was changed.';
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const { code, details, retry_after_seconds: retryAfter } = error.body;
  if (code === 'network') return error.body.message;
  const spec = ERRORS[code as ErrorCode];
  if (!spec) return 'The service answered with an error this page does not know. Try again.';
  const missing = [
    ...((details?.missing as string[] | undefined) ?? []),
    ...((details?.blocking as string[] | undefined) ?? []),
  ].map((item) => MISSING_WORDS[item] ?? item);
  const issues = details?.issues ?? [];
  // Reached only when no field of the form is named (fieldErrors placed the rest): say the reasons.
  if (code === 'invalid_request' && issues.length > 0) {
    return `Some of what you entered was not accepted: ${issues.map((issue) => sentence(issue.reason)).join(' ')}`;
  }
  return spec.page
    .replace('{blocking}', list(missing))
    .replace('{seconds}', waitWords(retryAfter ?? 1))
    .replace(
      '{reason}',
      typeof details?.reason === 'string' && details.reason ? details.reason : 'no reason given',
    );
}

/** A wait as a person reads it: seconds, minutes, or hours past two of them. */
export function waitWords(seconds: number): string {
  if (seconds <= 1) return 'a second';
  if (seconds < 120) return `${seconds} seconds`;
  if (seconds < 2 * 3600) return `${Math.ceil(seconds / 60)} minutes`;
  return `about ${Math.round(seconds / 3600)} hours`;
}

/** One field of a form, as a refusal may name it (`details.issues[].field`) and as the page shows it. */
export interface FormField {
  /** The input's id. */
  id: string;
  /** What the page calls it, for reasons that do not say. */
  label: string;
}

/**
 * The reasons a refusal gives per field, keyed by the input they belong to. A field the form does
 * not show is left to the notice (`errorText`).
 */
export function fieldErrors(error: unknown, fields: Record<string, FormField>): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const found: Record<string, string> = {};
  for (const issue of error.body.details?.issues ?? []) {
    const field = fields[issue.field];
    if (field && !found[field.id]) found[field.id] = readableReason(issue.reason, field.label);
  }
  return found;
}

/** A validator's reason, in words: `Too big: expected string to have <=5000 characters` and the like. */
function readableReason(reason: string, label: string): string {
  const longest = /<=\s*(\d+)\s*characters/.exec(reason);
  if (longest) return `${label} is too long: at most ${Number(longest[1]).toLocaleString('en')} characters.`;
  const shortest = />=\s*(\d+)\s*characters/.exec(reason);
  if (shortest) return `${label} is too short: at least ${shortest[1]} characters.`;
  if (/required|expected .* received undefined/i.test(reason)) return `${label} is required.`;
  return `${label}: ${sentence(reason).replace(/^./, (first) => first.toLowerCase())}`;
}

function sentence(reason: string): string {
  const capital = reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
