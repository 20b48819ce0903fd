import type { Config } from '../config.js';
import { bareHost, knownHostsName, loadHostKeys } from '../git/host-keys.js';
import { remoteUrl } from '../git/repos.js';

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

export async function sshHost(config: Config): Promise<SshHost> {
  const name = knownHostsName(config.ssh.publicHost, config.sshPort);
  return {
    host: bareHost(config.ssh.publicHost),
    port: config.sshPort,
    keys: (await loadHostKeys(config.dataDir)).map((key) => ({
      type: key.type,
      sha256: key.sha256,
      knownHostsLine: `${name} ${key.publicKey}`,
    })),
    remote: (owner, slug) => remoteUrl(config, owner, slug),
  };
}
