import { crc32 } from 'node:zlib';

/**
 * Checksums some providers build into their tokens. A token whose checksum holds was made by the
 * provider's generator: its structure proves it real, whatever words its random part happens to
 * spell (docs/SCANNING.md, placeholders).
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** CRC32 of `text` in base62 (digits, upper, lower), left-padded with `0` to six characters. */
export function base62Crc32(text: string): string {
  let n = crc32(text);
  let out = '';
  while (n > 0) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(6, '0');
}

/**
 * GitHub's token format (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`) and npm's (`npm_`): a four-character
 * prefix, the random part (30 base62 characters; longer in some GitHub refresh tokens), then the
 * CRC32 of the random part in base62, six characters.
 */
export function hasTokenChecksum(token: string): boolean {
  if (!/^(?:gh[pousr]|npm)_[A-Za-z0-9]{36,255}$/.test(token)) return false;
  return base62Crc32(token.slice(4, -6)) === token.slice(-6);
}
