import { type Config, ConfigError } from './config.js';
import { gitHostToken } from './git/repositories.js';
import { repositoryOperations } from './git/repository-operations.js';
import { type SshServer, startSshServer } from './git/ssh-server.js';
import { operations, startOperatorSocket } from './operations.js';
import { type ControlServer, startControlServer } from './platform/control.js';
import { type MetricsListener, startMetricsListener } from './platform/metrics/exposition.js';
import { hostedRepoAccess } from './releases/ssh-access.js';
import { createContext, type Runtime } from './runtime.js';

export interface RunningGitHost {
  runtime: Runtime;
  /** The repository operations' URL: the other processes' GIT_HOST_URL. */
  address: string;
  close(): Promise<void>;
}

/**
 * `repo402 git-host`: the one process that keeps the hosted repositories (docs/OPERATIONS.md,
 * "Scaling out"). It serves git over SSH, runs the jobs that read the repositories (release cuts),
 * and answers the repository operations the stateless API processes send it on HOST:PORT, each
 * with the bearer token derived from the shared APP_SECRET. It serves no public HTTP API.
 */
export async function startGitHost(config: Config): Promise<RunningGitHost> {
  // The API processes it serves read its zips from the bucket and its rows from the database, and
  // call it with a token derived from the secret: without all three shared, nothing it cuts reaches them.
  const missing = (
    [
      ['DATABASE_URL', config.databaseUrl],
      ['S3_BUCKET', config.s3],
      ['APP_SECRET', config.appSecret],
    ] as const
  ).filter(([, value]) => !value);
  if (missing.length > 0) {
    throw new ConfigError(
      missing.map(([name]) => `${name}: required by repo402 git-host (the processes it serves share it)`),
    );
  }
  // GIT_HOST_URL names this very process in a shared environment: here the repositories are local.
  const own = { ...config, gitHostUrl: undefined };
  const runtime = await createContext(own, { jobs: 'repository-workers', openPayments: false });
  const { ctx } = runtime;
  let ssh: SshServer | undefined;
  let api: ControlServer | undefined;
  let control: ControlServer | undefined;
  let metrics: MetricsListener | undefined;
  try {
    ssh = await startSshServer(ctx, hostedRepoAccess(ctx));
    api = await startControlServer(
      { host: own.host, port: own.port, token: gitHostToken(ctx.appSecret) },
      ctx,
      { ping: operations.ping, ...repositoryOperations },
    );
    control = await startOperatorSocket(ctx);
    metrics = await startMetricsListener(ctx);
    ctx.pause.start();
    ctx.log.info(
      { operations: api.address, ssh: ssh.address, metrics: metrics?.address, database: ctx.database.driver },
      `repo402 git host is up: repository operations on ${api.address}, git over SSH on ${ssh.address}`,
    );
  } catch (error) {
    await metrics?.close();
    await control?.close();
    await api?.close();
    await ssh?.close();
    await runtime.close();
    throw error;
  }
  const started = { ssh, api, control, metrics };
  let closing: Promise<void> | undefined;
  return {
    runtime,
    address: api.address,
    close: () => {
      closing ??= (async () => {
        await started.metrics?.close();
        await started.control?.close();
        await started.api.close();
        await started.ssh.close();
        await runtime.close();
      })();
      return closing;
    },
  };
}
