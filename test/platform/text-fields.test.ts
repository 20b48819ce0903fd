import { describe, expect, it } from 'vitest';
import { multiLineText, singleLineText, textRefusal } from '../../src/platform/text-fields.js';

describe('the text rule', () => {
  it.each([
    ['plain text', 'A toolkit'],
    ['accents, emoji and joiners', 'Café 😀 👩‍👩‍👧'],
    ['right-to-left text', 'שלום עולם'],
    ['an astral character (a valid surrogate pair)', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'],
    ['the empty string', ''],
  ])('takes %s in both kinds of field', (_name, value) => {
    expect(textRefusal(value, 'single')).toBeUndefined();
    expect(textRefusal(value, 'multi')).toBeUndefined();
  });

  it.each([
    ['NUL', 'a\u0000b', 'contains the control character U+0000'],
    ['BEL', '\u0007', 'contains the control character U+0007'],
    ['ESC', '\u001b[2J', 'contains the control character U+001B'],
    ['DEL', 'a\u007f', 'contains the control character U+007F'],
    ['a C1 control (NEL)', 'a\u0085b', 'contains the control character U+0085'],
    [
      'a lone high surrogate',
      'a\ud800',
      'contains a lone UTF-16 surrogate (U+D800), which is not valid Unicode',
    ],
    [
      'a lone low surrogate',
      '\udfff',
      'contains a lone UTF-16 surrogate (U+DFFF), which is not valid Unicode',
    ],
    [
      'surrogates in the wrong order',
      '\ude00\ud83d',
      'contains a lone UTF-16 surrogate (U+DE00), which is not valid Unicode',
    ],
  ])('refuses %s everywhere', (_name, value, reason) => {
    expect(textRefusal(value, 'multi')).toBe(reason);
    expect(textRefusal(value, 'single')).toContain(reason);
  });

  it.each([
    ['LF', 'a\nb', 'U+000A'],
    ['CR', 'a\rb', 'U+000D'],
    ['TAB', 'a\tb', 'U+0009'],
  ])('keeps %s in text of several lines and refuses it in a single line', (_name, value, codePoint) => {
    expect(textRefusal(value, 'multi')).toBeUndefined();
    expect(textRefusal(value, 'single')).toBe(
      `contains the control character ${codePoint}; this field is a single line`,
    );
  });

  it('refuses the Unicode line and paragraph separators in a single line only', () => {
    expect(textRefusal('a\u2028b', 'single')).toBe(
      'contains the line separator U+2028; this field is a single line',
    );
    expect(textRefusal('a\u2029b', 'multi')).toBeUndefined();
  });

  it('reports through zod as an issue on the field', () => {
    const single = singleLineText().max(5).safeParse('a\u0000');
    expect(single.success).toBe(false);
    expect(single.error?.issues).toEqual([
      expect.objectContaining({
        code: 'custom',
        message: 'contains the control character U+0000; this field is a single line',
      }),
    ]);
    expect(multiLineText().max(5).safeParse('a\nb').success).toBe(true);
    expect(multiLineText().max(2).safeParse('a\nb').success).toBe(false);
  });
});
