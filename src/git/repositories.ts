import { createHmac } from 'node:crypto';
import type { Config } from '../config.js';
import { callOperation } from '../platform/control.js';
import { type Repositories, repositoryOperations } from './repository-operations.js';

/** How long a request waits for the git host; a tree walk of 20,000 files takes seconds, not minutes. */
const GIT_HOST_TIMEOUT_MS = 60_000;

/** The repositories on this process's disk (DATA_DIR/repos). */
export function localRepositories(config: Config): Repositories {
  const ctx = { config };
  return {
    run(name, args) {
      const operation = repositoryOperations[name];
      return operation.run(ctx, operation.args.parse(args) as never) as never;
    },
  };
}

/** The repositories kept by the git host at `url`, for a process that keeps none. */
export function remoteRepositories(url: string, appSecret: Buffer): Repositories {
  const target = {
    url: url.replace(/\/+$/, ''),
    token: gitHostToken(appSecret),
    timeoutMs: GIT_HOST_TIMEOUT_MS,
  };
  return { run: (name, args) => callOperation(target, name, args) as never };
}

/** The git host's bearer token: derived from the installation secret every process of it shares. */
export function gitHostToken(appSecret: Buffer): string {
  return createHmac('sha256', appSecret).update('repo402/git-host').digest('base64url');
}
