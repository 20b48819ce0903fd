import type { AppContext } from '../context.js';
import { bareHost, knownHostsName, type PublicHostKey } from '../git/host-keys.js';
import { remoteUrl } from '../git/repos.js';
import type { Repositories } from '../git/repository-operations.js';

/** How long a process keeps the host keys it read: a rotation on the git host reaches creators within it. */
const HOST_KEYS_TTL_MS = 5 * 60_000;
const known = new WeakMap<Repositories, { keys: Promise<PublicHostKey[]>; until: number }>();

/**
 * The SSH server's public host keys, from wherever the repositories are: this process's DATA_DIR,
 * or the git host (`GIT_HOST_URL`), so every API process shows creators the keys the server they
 * push to presents. Kept a few minutes; a failed read is not kept.
 */
export function hostKeys(ctx: Pick<AppContext, 'repositories'>): Promise<PublicHostKey[]> {
  const kept = known.get(ctx.repositories);
  if (kept && kept.until > Date.now()) return kept.keys;
  const keys = ctx.repositories.run('ssh.host-keys', {});
  keys.catch(() => known.delete(ctx.repositories));
  known.set(ctx.repositories, { keys, until: Date.now() + HOST_KEYS_TTL_MS });
  return keys;
}

/**
 * What a creator checks and pins before the first push to a hosted listing: where the SSH server
 * is, and its host keys as `host_key_fingerprints` and `known_hosts` name them.
 */
export interface SshHost {
  /** As `ssh-keyscan` takes it. */
  host: string;
  port: number;
  keys: Array<{ type: string; sha256: string; knownHostsLine: string }>;
  remote(owner: string, slug: string): string;
}

export async function sshHost(ctx: Pick<AppContext, 'config' | 'repositories'>): Promise<SshHost> {
  const { config } = ctx;
  const name = knownHostsName(config.ssh.publicHost, config.sshPort);
  return {
    host: bareHost(config.ssh.publicHost),
    port: config.sshPort,
    keys: (await hostKeys(ctx)).map((key) => ({
      type: key.type,
      sha256: key.sha256,
      knownHostsLine: `${name} ${key.publicKey}`,
    })),
    remote: (owner, slug) => remoteUrl(config, owner, slug),
  };
}
