import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ssh2 from 'ssh2';
import { fingerprintOf } from './ssh-keys.js';

const { utils } = ssh2;

export interface HostKey {
  type: string;
  /** OpenSSH private key text, handed to the SSH server. */
  privateKey: string;
  /** `SHA256:…`, what `ssh-keygen -lf` and the client's first-connection prompt show. */
  sha256: string;
  /** `<type> <base64>`, as a `known_hosts` line carries it after the host name. */
  publicKey: string;
}

/** What a host key tells a creator: the parts of it anyone may see. */
export type PublicHostKey = Pick<HostKey, 'type' | 'sha256' | 'publicKey'>;

export async function publicHostKeys(dataDir: string): Promise<PublicHostKey[]> {
  return (await loadHostKeys(dataDir)).map(({ type, sha256, publicKey }) => ({ type, sha256, publicKey }));
}

const KINDS = [
  { file: 'ssh_host_ed25519_key', generate: () => utils.generateKeyPairSync('ed25519') },
  { file: 'ssh_host_ecdsa_key', generate: () => utils.generateKeyPairSync('ecdsa', { bits: 256 }) },
] as const;

const cache = new Map<string, Promise<HostKey[]>>();

/**
 * The SSH server's host keys, generated on first use and kept in DATA_DIR/ssh so the fingerprints
 * creators pinned stay valid across restarts. Only the process that serves SSH holds them: the
 * others ask it for the public halves (`ssh.host-keys`, a repository operation).
 */
export function loadHostKeys(dataDir: string): Promise<HostKey[]> {
  let keys = cache.get(dataDir);
  if (!keys) {
    keys = readOrCreate(path.join(dataDir, 'ssh'));
    keys.catch(() => cache.delete(dataDir));
    cache.set(dataDir, keys);
  }
  return keys;
}

/**
 * ssh2 1.17 now and then writes an ECDSA key its own parser calls malformed (about 1 in 200):
 * generate until the key reads back, so a server never starts with a key it cannot load.
 */
function generateParseable(generate: () => { private: string }): string {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const key = generate().private;
    if (!(utils.parseKey(key) instanceof Error)) return key;
  }
  throw new Error('could not generate a readable SSH host key');
}

async function readOrCreate(dir: string): Promise<HostKey[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const keys: HostKey[] = [];
  for (const kind of KINDS) {
    const file = path.join(dir, kind.file);
    let privateKey: string;
    try {
      privateKey = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      privateKey = generateParseable(kind.generate);
      // `wx`: when another process wrote one first, use theirs.
      await writeFile(file, privateKey, { mode: 0o600, flag: 'wx' }).catch(async (writeError) => {
        if ((writeError as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError;
        privateKey = await readFile(file, 'utf8');
      });
    }
    const parsed = utils.parseKey(privateKey);
    if (parsed instanceof Error) throw new Error(`Unreadable SSH host key ${file}: ${parsed.message}`);
    const blob = parsed.getPublicSSH();
    keys.push({
      type: parsed.type,
      privateKey,
      sha256: fingerprintOf(blob),
      publicKey: `${parsed.type} ${blob.toString('base64')}`,
    });
  }
  return keys;
}

/** A host as `ssh` and `ssh-keyscan` take it: an IPv6 address may come bracketed, as in a URL. */
export function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1');
}

/**
 * How OpenSSH names a server in `known_hosts` (and `ssh-keyscan` prints it): the bare host on port
 * 22, `[host]:port` on any other.
 */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? bareHost(host) : `[${bareHost(host)}]:${port}`;
}
