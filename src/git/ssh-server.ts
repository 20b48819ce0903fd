import net, { type AddressInfo, type Socket } from 'node:net';
import ssh2 from 'ssh2';
import type { AppContext } from '../context.js';
import { ConnectionGate } from './connection-gate.js';
import { loadHostKeys } from './host-keys.js';
import { installHooks, repoPath } from './repos.js';
import { spawnGitService } from './run-git.js';
import { fingerprintOf } from './ssh-keys.js';

const { Server, utils } = ssh2;

export interface SshServer {
  port: number;
  /** Where it listens, `host:port` (an IPv6 host in brackets). */
  address: string;
  close(): Promise<void>;
}

export type GitService = 'upload-pack' | 'receive-pack';

/**
 * What the SSH server asks of the domain that owns the hosted repositories (`releases/ssh-access.ts`
 * supplies it): which keys may connect, whether a key may use a repository, how a push is checked
 * and what follows it. The server itself knows only keys, repositories and git.
 */
export interface SshAccess {
  /** Hook scripts by name (`pre-receive`), installed once; every served git uses them. */
  hooks: Record<string, string>;
  /** Whether a key with this fingerprint may authenticate at all. */
  isKnownKey(fingerprint: string): Promise<boolean>;
  /** The key's use of `owner/slug`: refused (the message the client sees), or granted. */
  open(request: {
    fingerprint: string;
    owner: string;
    slug: string;
    service: GitService;
  }): Promise<{ refused: string } | SshGrant>;
}

export interface SshGrant {
  /** The hooks' environment for this command (the hooks cannot reach the database). */
  hookEnv: Record<string, string>;
  /** After a `receive-pack` that succeeded: the lines to show the pusher. Never throws. */
  afterPush(gitDir: string): Promise<string[]>;
}

/** `git-upload-pack '/owner/slug.git'` and the like, as the git client sends them. */
/** What a pusher is told while the operator has paused the service. */
export const PAUSED_PUSH =
  'the service is paused for maintenance, so pushes are refused for now; nothing was changed. Push again in a few minutes.';

const COMMAND = /^git[- ](upload-pack|receive-pack) '\/?([a-z0-9-]+)\/([a-z0-9-]+)\.git\/?'$/;

/**
 * The hosted rail's SSH server: public-key authentication against live deploy keys, and exactly
 * two commands, `git-upload-pack` and `git-receive-pack`, on the one repository the key belongs
 * to (`access` decides which that is). No shell, pty, sftp, port forwarding or other command.
 * After a successful push, `access` says what to tell the pusher.
 *
 * Every connection costs a file descriptor the HTTP API needs too, so none is kept for free:
 * connections over the total or per-address cap are closed before any SSH work, a connection
 * must authenticate within the handshake deadline, must then be running a git command within the
 * same deadline (after authenticating, and again after each command ends: keepalives alone hold no
 * slot), and is closed after the idle timeout with no bytes either way.
 */
export async function startSshServer(
  ctx: Pick<AppContext, 'config' | 'log' | 'pause' | 'metrics'>,
  access: SshAccess,
  options: { port?: number; host?: string } = {},
): Promise<SshServer> {
  const hostKeys = await loadHostKeys(ctx.config.dataDir);
  const hooks = await installHooks(ctx.config, access.hooks);
  const log = ctx.log.child({ component: 'ssh' });
  const limits = ctx.config.ssh;
  const { sshConnections, sshRefusals } = ctx.metrics;
  const gate = new ConnectionGate(limits.connectionCaps, log, (cap) => sshRefusals.inc({ reason: cap }));
  /** Admitted connections by TCP peer (`ip port`), which is how ssh2 names them to us. */
  const connections = new Map<
    string,
    { socket: Socket; handshakeDeadline: NodeJS.Timeout; client?: ssh2.Connection }
  >();
  const server = new Server(
    {
      hostKeys: hostKeys.map((key) => key.privateKey),
      // ssh2 pings authenticated clients; a ping is traffic and would keep an idle session open
      // forever, so it comes less often than the idle timeout, which also ends dead peers.
      keepaliveInterval: 2 * limits.idleTimeoutMs,
    },
    (client, info) => {
      const connection = connections.get(`${info.ip} ${info.port}`);
      if (!connection) return client.end();
      connection.client = client;
      client.once('ready', () => {
        clearTimeout(connection.handshakeDeadline);
        gate.authenticated(connection.socket);
        connection.socket.setTimeout(limits.idleTimeoutMs, () => {
          log.debug({ address: info.ip }, 'ssh session idle; closing');
          connection.socket.destroy();
        });
      });
      serveClient(client, () => connection.socket.destroy());
    },
  );
  const listener = net.createServer((socket) => {
    if (!gate.admit(socket)) return;
    sshConnections.inc();
    socket.once('close', () => sshConnections.dec());
    const peer = `${socket.remoteAddress} ${socket.remotePort}`;
    // Absolute, not an inactivity timer: a client trickling bytes gets no longer than a silent one.
    const handshakeDeadline = setTimeout(() => {
      log.debug({ address: socket.remoteAddress }, 'ssh handshake not completed in time; closing');
      socket.destroy();
    }, limits.handshakeTimeoutMs);
    connections.set(peer, { socket, handshakeDeadline });
    socket.once('close', () => {
      clearTimeout(handshakeDeadline);
      connections.delete(peer);
    });
    server.injectSocket(socket);
  });

  function serveClient(client: ssh2.Connection, drop: () => void): void {
    let fingerprint: string | undefined;
    let commands = 0;
    let commandDeadline: NodeJS.Timeout | undefined;
    const awaitCommand = () => {
      commandDeadline = setTimeout(() => {
        log.debug('ssh connection ran no git command in time; closing');
        drop();
      }, limits.handshakeTimeoutMs);
    };
    /** A key offered and refused: counted once, when the connection closes without logging in. */
    let keyRefused = false;
    client.on('close', () => {
      clearTimeout(commandDeadline);
      if (keyRefused && !fingerprint) sshRefusals.inc({ reason: 'unknown_key' });
    });
    client.on('error', (error) => log.debug({ err: error }, 'ssh client error'));
    client.on('authentication', (auth) => {
      if (auth.method !== 'publickey') return auth.reject(['publickey']);
      const candidate = fingerprintOf(auth.key.data);
      access
        .isKnownKey(candidate)
        .then((known) => {
          if (!known) {
            keyRefused = true;
            return auth.reject(['publickey']);
          }
          // Without a signature the client only asks whether this key would do.
          if (!auth.signature) return auth.accept();
          const key = utils.parseKey(`${auth.key.algo} ${auth.key.data.toString('base64')}`);
          if (
            key instanceof Error ||
            !auth.blob ||
            key.verify(auth.blob, auth.signature, auth.hashAlgo) !== true
          ) {
            sshRefusals.inc({ reason: 'bad_signature' });
            return auth.reject(['publickey']);
          }
          fingerprint = candidate;
          auth.accept();
        })
        .catch((error) => {
          log.error({ err: error }, 'ssh authentication failed');
          auth.reject(['publickey']);
        });
    });
    client.on('ready', () => {
      awaitCommand();
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        let protocol: string | undefined;
        session.on('env', (accept, reject, info) => {
          // git asks for protocol v2 through GIT_PROTOCOL; nothing else is taken from the client.
          if (info.key === 'GIT_PROTOCOL' && /^[a-z0-9=:]{1,64}$/.test(info.val)) {
            protocol = info.val;
            accept?.();
          } else reject?.();
        });
        for (const refused of ['pty', 'shell', 'subsystem', 'x11', 'auth-agent', 'signal'] as const) {
          session.on(refused, (_accept: unknown, reject?: () => void) => reject?.());
        }
        session.on('exec', (accept, reject, info) => {
          const match = COMMAND.exec(info.command);
          if (!match || !fingerprint) return reject();
          const [, service, owner, slug] = match as unknown as [string, GitService, string, string];
          const channel = accept();
          clearTimeout(commandDeadline);
          commands += 1;
          channel.once('close', () => {
            commands -= 1;
            if (commands === 0) awaitCommand();
          });
          const refuse = (message: string, reason: string) => {
            sshRefusals.inc({ reason });
            channel.stderr.write(`repo402: ${message}\n`);
            channel.exit(128);
            channel.end();
          };
          // Paused: nothing new is taken in; reading what is there stays possible.
          if (service === 'receive-pack' && ctx.pause.paused) return refuse(PAUSED_PUSH, 'paused');
          access
            .open({ fingerprint, owner, slug, service })
            .then((grant) => {
              if ('refused' in grant) return refuse(grant.refused, 'access');
              const gitDir = repoPath(ctx.config, owner, slug);
              const child = spawnGitService(service, gitDir, {
                hooksDir: hooks,
                env: { ...grant.hookEnv, ...(protocol ? { GIT_PROTOCOL: protocol } : {}) },
              });
              channel.pipe(child.stdin);
              child.stdout.pipe(channel, { end: false });
              child.stderr.pipe(channel.stderr, { end: false });
              child.stdin.on('error', () => {});
              child.on('error', (error) => {
                log.error({ err: error }, 'git failed to start');
                refuse('internal error', 'internal');
              });
              child.on('close', (code) => {
                const finish = () => {
                  channel.exit(code ?? 1);
                  channel.end();
                };
                if (service !== 'receive-pack' || code !== 0) return finish();
                grant
                  .afterPush(gitDir)
                  .then((lines) => {
                    for (const line of lines) channel.stderr.write(`repo402: ${line}\n`);
                  })
                  .finally(finish);
              });
            })
            .catch((error) => {
              log.error({ err: error }, 'ssh exec failed');
              refuse('internal error', 'internal');
            });
        });
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port ?? ctx.config.sshPort, options.host ?? limits.listenHost, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  listener.on('error', (error: Error) => log.error({ err: error }, 'ssh server error'));
  const bound = listener.address() as AddressInfo;
  return {
    port: bound.port,
    address: `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const { socket, client } of connections.values()) {
          if (client) client.end();
          else socket.destroy();
        }
      }),
  };
}
