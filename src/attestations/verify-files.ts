import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ExpectedRelease } from './expect.js';
import { KEYS_PATH } from './urls.js';
import {
  releaseNamedBy,
  sha256OfStream,
  trustedKeysOf,
  type Verification,
  verifyAttestation,
} from './verify.js';

export interface FileVerification {
  verification: Verification;
  /** Where the trusted keys came from. */
  keysFrom: string;
  /** Set when the keys were taken from the service the attestation names (no `--key`). */
  unpinned: boolean;
}

/**
 * `repo402 verify <zip> <attestation> --expect <owner/slug@version> [--key <keys.json | URL>]`: the
 * zip's SHA-256, read as it streams, against the envelope's subject; the signature and its key's
 * window with the keys of a saved keys document (offline) or of one fetched from a URL; the
 * statement's listing and version against what was bought. Without `key`, the keys document of the
 * service the statement names is fetched: that proves the statement is that service's, not that
 * the service is the one you meant.
 */
export async function verifyFiles(
  zipPath: string,
  attestationPath: string,
  options: { expect: ExpectedRelease; key?: string },
): Promise<FileVerification> {
  const envelope = await readJson(attestationPath);
  const keysFrom = options.key ?? keysUrlNamedBy(envelope);
  const document = /^https?:\/\//.test(keysFrom) ? await fetchJson(keysFrom) : await readJson(keysFrom);
  const sha256 = await sha256OfStream(createReadStream(zipPath));
  return {
    verification: verifyAttestation(envelope, trustedKeysOf(document), {
      artifactSha256: sha256,
      expect: options.expect,
    }),
    keysFrom,
    unpinned: !options.key,
  };
}

/** The line `repo402 verify` prints. */
export function describeVerification(zipPath: string, result: FileVerification): string {
  const { verification } = result;
  if (!verification.ok) return `NOT VERIFIED ${zipPath}: ${verification.reason}`;
  const p = verification.statement.predicate as Record<string, unknown> & {
    scan?: { verdict?: string };
  };
  return [
    `verified ${zipPath}: ${releaseNamedBy(verification.statement)}`,
    `(tag ${String(p.tag ?? '?')}, commit ${String(p.commit_sha ?? '?')}, tree ${String(p.tree_sha ?? '?')}, scan ${p.scan?.verdict ?? '?'})`,
    `attested at ${String(p.attested_at ?? '?')}, signed by key ${verification.keyid} from ${result.keysFrom}`,
  ].join(' ');
}

function keysUrlNamedBy(envelope: unknown): string {
  try {
    const payload = (envelope as { payload: string }).payload;
    const statement = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
    const service = String(statement.predicate.service);
    if (!/^https?:\/\//.test(service)) throw new Error('no service URL');
    return `${service}${KEYS_PATH}`;
  } catch {
    throw new Error('the attestation names no service to take keys from: pass --key <keys.json or URL>');
  }
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON`);
  }
}

async function fetchJson(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}
