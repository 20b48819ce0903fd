import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  assertCountryAllowed,
  assertNotSanctioned,
  checkComplianceConfig,
  isSanctioned,
  parseSanctionsList,
  requestCountry,
} from '../../src/platform/limits/compliance.js';

const A = '0x00000000000000000000000000000000000000aA';
const B = '0x00000000000000000000000000000000000000bB';

describe('sanctions list', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-compliance-'));
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(dir, { recursive: true, force: true });
  });

  it('parses one address per line, ignoring comments, blanks and case', () => {
    expect([...parseSanctionsList(`# list\n\n  ${A.toUpperCase()}  # why\r\n${B}\n#${B}\n`)]).toEqual([
      A.toUpperCase().toLowerCase(),
      B.toLowerCase(),
    ]);
  });

  it('matches addresses case-insensitively and refuses them with 403 sanctioned_counterparty', async () => {
    const file = path.join(dir, 'list.txt');
    await writeFile(file, `${A.toLowerCase()}\n`);
    const config = loadConfig({ SANCTIONS_FILE: file }).compliance;
    expect(await isSanctioned(config, A)).toBe(true);
    expect(await isSanctioned(config, B)).toBe(false);
    await expect(assertNotSanctioned(config, A)).rejects.toMatchObject({
      code: 'sanctioned_counterparty',
      status: 403,
    });
    await expect(assertNotSanctioned(config, B)).resolves.toBeUndefined();
  });

  it('checks nothing without a list', async () => {
    expect(await isSanctioned(loadConfig({}).compliance, A)).toBe(false);
  });

  it('re-reads the file when it changes, without a restart', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const file = path.join(dir, 'list.txt');
    await writeFile(file, `${A}\n`);
    const config = loadConfig({ SANCTIONS_FILE: file }).compliance;
    expect(await isSanctioned(config, B)).toBe(false);
    await writeFile(file, `${A}\n${B}\n`);
    await utimes(file, new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    vi.advanceTimersByTime(6_000);
    expect(await isSanctioned(config, B)).toBe(true);
  });

  it('stops start-up on a missing file', async () => {
    const config = loadConfig({ SANCTIONS_FILE: path.join(dir, 'missing.txt') }).compliance;
    await expect(checkComplianceConfig(config)).rejects.toThrow(/SANCTIONS_FILE=.*missing\.txt/);
  });
});

describe('jurisdictions', () => {
  const config = loadConfig({ COUNTRY_HEADER: 'CF-IPCountry', BLOCKED_COUNTRIES: 'kp, IR,cu' }).compliance;

  it('reads the configured header, in any case', () => {
    expect(config.blockedCountries).toEqual(['KP', 'IR', 'CU']);
    expect(requestCountry(config, { 'cf-ipcountry': 'de' })).toBe('DE');
    expect(requestCountry(config, {})).toBeUndefined();
  });

  it('refuses blocked countries with 451 blocked_jurisdiction', () => {
    const allowed = (headers: Record<string, string>) => () =>
      assertCountryAllowed(config, requestCountry(config, headers));
    expect(allowed({ 'cf-ipcountry': 'IR' })).toThrow(
      expect.objectContaining({ code: 'blocked_jurisdiction', status: 451 }),
    );
    expect(allowed({ 'cf-ipcountry': 'NL' })).not.toThrow();
    expect(allowed({})).not.toThrow();
  });

  it('checks nothing without a country header', () => {
    const open = loadConfig({ BLOCKED_COUNTRIES: 'KP' }).compliance;
    expect(() => assertCountryAllowed(open, requestCountry(open, { 'cf-ipcountry': 'KP' }))).not.toThrow();
  });

  it('refuses malformed settings at start-up', () => {
    expect(() => loadConfig({ BLOCKED_COUNTRIES: 'North Korea' })).toThrow(/BLOCKED_COUNTRIES/);
    expect(() => loadConfig({ COUNTRY_HEADER: 'bad header' })).toThrow(/COUNTRY_HEADER/);
    expect(() => loadConfig({ BASE_RPC_URL: 'ftp://x' })).toThrow(/BASE_RPC_URL/);
    expect(() => loadConfig({ SMTP_URL: 'http://x' })).toThrow(/SMTP_URL/);
  });
});
