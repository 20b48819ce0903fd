import { describe, expect, it } from 'vitest';
import {
  formatMicroUsdc,
  formatUsd,
  MAX_MICRO_USDC,
  MicroUsdcInput,
  parseMicroUsdc,
} from '../../src/platform/money.js';

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
});
