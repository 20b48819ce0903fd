import { buildApp } from './app.js';
import type { Config } from './config.js';
import type { App } from './context.js';
import { remoteUrl } from './git/repos.js';
import { type SshServer, startSshServer } from './git/ssh-server.js';
import { startOperatorSocket } from './operations.js';
import { type Clock, systemClock } from './platform/clock.js';
import type { ControlServer } from './platform/control.js';
import { type MetricsListener, startMetricsListener } from './platform/metrics/exposition.js';
import { hostedRepoAccess } from './releases/ssh-access.js';
import { createContext, type Runtime } from './runtime.js';

export interface RunningServer {
  app: App;
  runtime: Runtime;
  /** Where the HTTP server listens, e.g. http://127.0.0.1:8402. */
  address: string;
  /** Stops accepting, lets in-flight requests finish, then closes the database. Idempotent. */
  close(): Promise<void>;
}

export async function startServer(config: Config, clock: Clock = systemClock): Promise<RunningServer> {
  const runtime = await createContext(config, { clock, jobs: config.workers ? 'workers' : 'queue' });
  let app: App | undefined;
  let control: ControlServer | undefined;
  let ssh: SshServer | undefined;
  let metrics: MetricsListener | undefined;
  try {
    app = await buildApp(runtime.ctx);
    // SSH first: once /api/health answers, remotes handed out by the API work. A process with a
    // git host (GIT_HOST_URL) keeps no repositories: the git host serves SSH.
    if (!config.gitHostUrl) ssh = await startSshServer(runtime.ctx, hostedRepoAccess(runtime.ctx));
    const address = await app.listen({ port: config.port, host: config.host });
    control = await startOperatorSocket(runtime.ctx);
    metrics = await startMetricsListener(runtime.ctx);
    runtime.ctx.pause.start();
    const git = ssh ? `git over SSH on ${ssh.address}` : `repositories at the git host ${config.gitHostUrl}`;
    app.log.info(
      {
        http: address,
        ssh: ssh?.address,
        metrics: metrics?.address,
        gitHost: config.gitHostUrl,
        baseUrl: config.baseUrl,
        sshRemotes: remoteUrl(config, '<owner>', '<slug>'),
        database: runtime.ctx.database.driver,
      },
      `repo402 is up: HTTP on ${address}, ${git}`,
    );
    let closing: Promise<void> | undefined;
    const started = app;
    return {
      app: started,
      runtime,
      address,
      close: () => {
        closing ??= (async () => {
          await metrics?.close();
          await control?.close();
          await ssh?.close();
          await started.close();
          await runtime.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await metrics?.close();
    await control?.close();
    await ssh?.close();
    await app?.close();
    await runtime.close();
    throw error;
  }
}
