import { z } from 'zod';

/**
 * The one rule for text a caller sends, in bodies and query strings alike. PostgreSQL `text`
 * cannot hold U+0000, and a lone UTF-16 surrogate (JSON can carry `"\ud800"`) has no UTF-8 form,
 * so the database would keep U+FFFD and the value would not read back as sent: both are refused
 * everywhere. Control characters are refused too (nothing a caller means needs them, and they
 * garble logs, terminals and the pages that show the text); a field of several lines keeps TAB,
 * LF and CR. A refused value is `400 invalid_request` naming the field and the first offender.
 */

const LONE_SURROGATE = /\p{Cs}/u;

type Lines = 'single' | 'multi';

/** C0 controls, DEL and C1 controls; TAB, LF and CR also count in single-line text. */
function isRefusedControl(codePoint: number, lines: Lines): boolean {
  if (lines === 'multi' && (codePoint === 0x09 || codePoint === 0x0a || codePoint === 0x0d)) return false;
  return codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f);
}

const codePointName = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `value` cannot be taken as text of `lines`, or undefined when it can. */
export function textRefusal(value: string, lines: Lines): string | undefined {
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) {
    return `contains a lone UTF-16 surrogate (${codePointName(surrogate[0].charCodeAt(0))}), which is not valid Unicode`;
  }
  for (const char of value) {
    const codePoint = char.codePointAt(0)!;
    if (isRefusedControl(codePoint, lines)) {
      return `contains the control character ${codePointName(codePoint)}${lines === 'single' ? '; this field is a single line' : ''}`;
    }
    if (lines === 'single' && (codePoint === 0x2028 || codePoint === 0x2029)) {
      return `contains the line separator ${codePointName(codePoint)}; this field is a single line`;
    }
  }
  return undefined;
}

function text(lines: Lines) {
  return z.string().superRefine((value, ctx) => {
    const reason = textRefusal(value, lines);
    if (reason) ctx.addIssue({ code: 'custom', message: reason, input: value });
  });
}

/** One line of text: no control characters, no line separators, no lone surrogates. */
export const singleLineText = () => text('single');

/** Text of one or more lines: TAB, LF and CR are its only control characters; no lone surrogates. */
export const multiLineText = () => text('multi');
