import { isReservedHandle, isValidName } from '../identity/handles.js';

/**
 * The page's own checks of what a person types, before anything is signed or sent: the same rules
 * the service applies (a handle by the service's own code), said as the page says them. The service
 * checks again; these only spare a wallet signature on a form that would be refused.
 */

/** A handle's or a listing's name in URLs: the one rule both follow. */
export function nameProblem(typed: string, what: 'A handle' | 'A name'): string | undefined {
  return isValidName(typed.trim())
    ? undefined
    : `${what} is 3 to 39 lower-case letters, digits and single hyphens, not starting or ending with a hyphen.`;
}

export function handleProblem(typed: string): string | undefined {
  const problem = nameProblem(typed, 'A handle');
  if (problem) return problem;
  if (isReservedHandle(typed.trim())) return 'That name is reserved by the service. Choose another.';
  return undefined;
}

/** Something@somewhere.tld with no spaces: what the service takes as an e-mail address. */
export function emailProblem(typed: string): string | undefined {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(typed.trim())
    ? undefined
    : 'Enter an e-mail address, such as abuse@example.com.';
}

export function addressProblem(typed: string): string | undefined {
  return /^0x[0-9a-fA-F]{40}$/.test(typed.trim())
    ? undefined
    : 'Enter an address of 0x and 40 hexadecimal characters, as your wallet shows it.';
}
