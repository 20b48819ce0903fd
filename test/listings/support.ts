import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { bearer } from '../identity/support.js';
import type { TestApp } from '../support/app.js';

const exec = promisify(execFile);

export interface SshKey {
  /** Private key file, for `ssh -i`. */
  file: string;
  publicKey: string;
}

/** A fresh key pair made by the real ssh-keygen. */
export async function sshKeygen(
  type: 'ed25519' | 'ecdsa' | 'rsa' = 'ed25519',
  bits?: number,
): Promise<SshKey> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'repo402-key-'));
  const file = path.join(dir, 'id');
  await exec('ssh-keygen', [
    '-q',
    '-t',
    type,
    ...(bits ? ['-b', String(bits)] : []),
    '-N',
    '',
    '-C',
    'test@repo402',
    '-f',
    file,
  ]);
  return { file, publicKey: (await readFile(`${file}.pub`, 'utf8')).trim() };
}

let slugCounter = 0;
export function uniqueSlug(): string {
  slugCounter += 1;
  return `tool-${slugCounter}-${Math.random().toString(36).slice(2, 7)}`;
}

export interface CreatedListing extends Record<string, unknown> {
  id: string;
  owner: string;
  slug: string;
  deploy_key_fingerprint: string;
}

export function createListingRequest(t: TestApp, apiKey: string, body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/listings', headers: bearer(apiKey), payload: body });
}

export async function createHostedListing(
  t: TestApp,
  apiKey: string,
  publicKey: string,
  extra: Record<string, unknown> = {},
): Promise<CreatedListing> {
  const res = await createListingRequest(t, apiKey, {
    source: 'hosted',
    slug: uniqueSlug(),
    ssh_public_key: publicKey,
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
