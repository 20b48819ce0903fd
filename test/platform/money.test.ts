import { describe, expect, it } from 'vitest';
import { formatMicroUsdc, MicroUsdcInput, parseMicroUsdc } from '../../src/platform/money/money.js';
import { formatUsd, MAX_MICRO_USDC, parseUsd } from '../../src/platform/money/usd.js';

describe('money', () => {
  it('parses decimal integer strings to bigint exactly', () => {
    expect(parseMicroUsdc('0')).toBe(0n);
    expect(parseMicroUsdc('9000000')).toBe(9_000_000n);
    expect(parseMicroUsdc('1000000000000000')).toBe(MAX_MICRO_USDC);
  });

  it.each(['', '-1', '01', '1.5', '1e6', ' 1', '0x10', '١٢', '1000000000000001', '9'.repeat(40)])(
    'refuses %j',
    (value) => {
      expect(() => parseMicroUsdc(value)).toThrow(RangeError);
      expect(MicroUsdcInput.safeParse(value).success).toBe(false);
    },
  );

  it('refuses JSON numbers at the boundary', () => {
    expect(MicroUsdcInput.safeParse(9000000).success).toBe(false);
  });

  it('formats bigint back to the wire string', () => {
    expect(formatMicroUsdc(9_000_000n)).toBe('9000000');
    expect(() => formatMicroUsdc(-1n)).toThrow(RangeError);
  });

  it('formats dollars without floats', () => {
    expect(formatUsd(9_000_000n)).toBe('9.00');
    expect(formatUsd(0n)).toBe('0.00');
    expect(formatUsd(1_500_000n)).toBe('1.50');
    expect(formatUsd(1_234_567n)).toBe('1.234567');
    expect(formatUsd(10n)).toBe('0.00001');
    expect(formatUsd(MAX_MICRO_USDC)).toBe('1000000000.00');
  });

  it('reads dollars a person typed as exact micro-USDC', () => {
    expect(parseUsd('0.10')).toBe(100_000n);
    expect(parseUsd('19.99')).toBe(19_990_000n);
    expect(parseUsd('1234.567891')).toBe(1_234_567_891n);
    expect(parseUsd(' $5 ')).toBe(5_000_000n);
    expect(parseUsd('0')).toBe(0n);
    expect(parseUsd('1000000000')).toBe(MAX_MICRO_USDC);
  });

  it.each(['', '.5', '5.', '1.2345678', '-1', '1e3', '1,000', '01', '0x10', '1000000000.01', 'NaN', '١'])(
    'refuses the typed amount %j',
    (typed) => {
      expect(parseUsd(typed)).toBeUndefined();
    },
  );
});
