import { readFile, stat } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { ComplianceConfig } from '../../config.js';
import { AppError } from '../errors.js';

/**
 * Sanctions and jurisdictions (DESIGN.md item 13), the one place every route that moves money or
 * binds an address asks. The sanctions list is a file of addresses (one per line, `#` comments,
 * case-insensitive) that operators replace in place: it is re-read when its modification time
 * changes, checked at most every few seconds, so an update needs no restart.
 */

const RECHECK_MS = 5_000;

interface LoadedList {
  mtimeMs: number;
  checkedAt: number;
  addresses: Set<string>;
}

const lists = new Map<string, LoadedList>();
const loading = new Map<string, Promise<LoadedList>>();

export function parseSanctionsList(text: string): Set<string> {
  const addresses = new Set<string>();
  for (const raw of text.split(/\r?\n/)) {
    const entry = raw.replace(/#.*$/, '').trim();
    if (entry) addresses.add(entry.toLowerCase());
  }
  return addresses;
}

async function load(file: string): Promise<LoadedList> {
  const info = await stat(file);
  return {
    mtimeMs: info.mtimeMs,
    checkedAt: Date.now(),
    addresses: parseSanctionsList(await readFile(file, 'utf8')),
  };
}

/** The current list; a missing or unreadable file is an operator error and fails loudly. */
async function sanctionedAddresses(file: string): Promise<Set<string>> {
  const cached = lists.get(file);
  if (cached && Date.now() - cached.checkedAt < RECHECK_MS) return cached.addresses;
  let pending = loading.get(file);
  if (!pending) {
    pending = (async () => {
      if (cached) {
        const info = await stat(file);
        if (info.mtimeMs === cached.mtimeMs) return { ...cached, checkedAt: Date.now() };
      }
      return load(file);
    })().finally(() => loading.delete(file));
    loading.set(file, pending);
  }
  const fresh = await pending;
  lists.set(file, fresh);
  return fresh.addresses;
}

/** Reads the configured list once, so a bad SANCTIONS_FILE stops start-up instead of the first payment. */
export async function checkComplianceConfig(config: ComplianceConfig): Promise<void> {
  if (!config.sanctionsFile) return;
  try {
    await sanctionedAddresses(config.sanctionsFile);
  } catch (error) {
    throw new Error(`SANCTIONS_FILE=${config.sanctionsFile}: ${(error as Error).message}`);
  }
}

export async function isSanctioned(config: ComplianceConfig, address: string): Promise<boolean> {
  if (!config.sanctionsFile) return false;
  return (await sanctionedAddresses(config.sanctionsFile)).has(address.toLowerCase());
}

/** `403 sanctioned_counterparty` when `address` is on the list. */
export async function assertNotSanctioned(config: ComplianceConfig, address: string): Promise<void> {
  if (await isSanctioned(config, address)) {
    throw new AppError('sanctioned_counterparty', {
      message: `The address ${address} is on a sanctions list`,
    });
  }
}

/** The request's country per the trusted proxy header, upper case; undefined when unknown. */
export function requestCountry(config: ComplianceConfig, headers: IncomingHttpHeaders): string | undefined {
  if (!config.countryHeader) return undefined;
  const value = headers[config.countryHeader];
  const country = (Array.isArray(value) ? value[0] : value)?.trim().toUpperCase();
  return country || undefined;
}

/** `451 blocked_jurisdiction` when `country` (from `requestCountry`; undefined when unknown) is blocked. */
export function assertCountryAllowed(config: ComplianceConfig, country: string | undefined): void {
  if (country && config.blockedCountries.includes(country)) {
    throw new AppError('blocked_jurisdiction', {
      message: `This service is not available in the request's jurisdiction (${country})`,
    });
  }
}
