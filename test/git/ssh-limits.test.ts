import { readFile } from 'node:fs/promises';
import net from 'node:net';
import pino from 'pino';
import ssh2 from 'ssh2';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SshServer, startSshServer } from '../../src/git/ssh-server.js';
import { hostedRepoAccess } from '../../src/releases/ssh-access.js';
import { type RegisteredCreator, registerCreator } from '../identity/support.js';
import { createHostedListing, type SshKey, sshKeygen } from '../listings/support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { PGLITE_ONLY } from '../support/db.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw TCP connection to the SSH port from `localAddress` (any 127.x address is this machine). */
function probe(port: number, localAddress: string) {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  const opened = Date.now();
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - opened)));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    socket,
    connected,
    received: () => received,
    /** Milliseconds from connecting until the connection closed, or `undefined` if still open after `waitMs`. */
    closedWithin: (waitMs: number) =>
      Promise.race([closed, new Promise<undefined>((resolve) => setTimeout(resolve, waitMs))]),
  };
}

/** Admitted connections hear the server's identification line first; refused ones are closed without a byte. */
async function admitted(port: number, localAddress: string) {
  const conn = probe(port, localAddress);
  await conn.connected;
  for (let waited = 0; !conn.received().startsWith('SSH-2.0-'); waited += 20) {
    if (waited > 5000) throw new Error(`no SSH identification for ${localAddress}: ${conn.received()}`);
    await sleep(20);
  }
  return conn;
}

async function refusedAtOnce(port: number, localAddress: string) {
  const conn = probe(port, localAddress);
  const closedAfter = await conn.closedWithin(3000);
  conn.socket.destroy();
  expect(closedAfter, `${localAddress} was admitted over its cap`).toBeDefined();
  expect(conn.received()).toBe('');
}

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('SSH connection caps and the handshake deadline', () => {
  let t: TestApp;
  let ssh: SshServer | undefined;
  const open: net.Socket[] = [];
  let captured: ReturnType<typeof capturingLogger>;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SSH_MAX_CONNECTIONS: '6',
        SSH_MAX_CONNECTIONS_PER_ADDRESS: '2',
        SSH_MAX_CONNECTIONS_PER_BLOCK: '3',
        SSH_MAX_UNAUTHENTICATED_CONNECTIONS: '4',
        SSH_HANDSHAKE_TIMEOUT_SECONDS: '1',
      },
    });
  });
  beforeEach(async () => {
    captured = capturingLogger();
    ssh = await startSshServer({ ...t.ctx, log: captured.log }, hostedRepoAccess(t.ctx), {
      port: 0,
      host: '127.0.0.1',
    });
  });
  afterEach(async () => {
    for (const socket of open.splice(0)) socket.destroy();
    await ssh?.close();
  });
  afterAll(() => t?.close());

  const refusals = () =>
    captured.lines
      .filter((line) => line.msg === 'ssh connection refused')
      .map(({ cap, limit, block }) => ({ cap, limit, block }));

  it('closes connections over the per-address or per-block cap before any SSH work, logging each block once', async () => {
    const port = ssh!.port;
    for (const address of ['127.0.1.2', '127.0.1.2', '127.0.1.3']) {
      open.push((await admitted(port, address)).socket);
    }
    await refusedAtOnce(port, '127.0.1.2');
    // Another address of the same /24: the block holds its three.
    await refusedAtOnce(port, '127.0.1.4');
    open.push((await admitted(port, '127.0.2.2')).socket);
    // A flood of refusals does not flood the log: one line per block and cap per interval.
    for (let i = 0; i < 20; i++) await refusedAtOnce(port, i % 2 ? '127.0.1.2' : '127.0.1.5');
    expect(refusals()).toEqual([
      { cap: 'per_address', limit: 2, block: '127.0.1.0/24' },
      { cap: 'per_block', limit: 3, block: '127.0.1.0/24' },
    ]);

    // A closed connection gives its slot back, to its address, its block and the total.
    open.shift()!.destroy();
    for (let tries = 0; ; tries++) {
      const conn = probe(port, '127.0.1.2');
      if ((await conn.closedWithin(300)) === undefined && conn.received().startsWith('SSH-2.0-')) {
        open.push(conn.socket);
        break;
      }
      conn.socket.destroy();
      if (tries > 20) throw new Error('the slot was not given back');
    }
  });

  it('gives a newcomer from a quieter block the place of the busiest block’s oldest unauthenticated connection', async () => {
    const port = ssh!.port;
    // Four unauthenticated places: three held by 127.0.1.0/24, one by 127.0.2.0/24.
    const busy = [];
    for (const address of ['127.0.1.2', '127.0.1.2', '127.0.1.3']) busy.push(await admitted(port, address));
    const quiet = await admitted(port, '127.0.2.2');
    open.push(...busy.map((conn) => conn.socket), quiet.socket);

    const first = await admitted(port, '127.0.3.2');
    open.push(first.socket);
    expect(await busy[0]!.closedWithin(2000), 'the oldest of the busiest block kept its place').toBeDefined();
    const second = await admitted(port, '127.0.4.2');
    open.push(second.socket);
    expect(await busy[1]!.closedWithin(2000)).toBeDefined();
    expect(
      await busy[2]!.closedWithin(100),
      'a block was left with none while others held one',
    ).toBeUndefined();

    // Every block holds one place now: nobody holds more than a newcomer would, so it is refused.
    await refusedAtOnce(port, '127.0.5.2');
    expect(refusals()).toEqual([{ cap: 'unauthenticated', limit: 4, block: '127.0.5.0/24' }]);
    expect(await quiet.closedWithin(100)).toBeUndefined();
  });

  it('keeps the places beyond the unauthenticated share for connections that have logged in', async () => {
    const port = ssh!.port;
    const creator = await registerCreator(t);
    const key = await sshKeygen('ed25519');
    await createHostedListing(t, creator.apiKey, key.publicKey);
    const flood = [];
    for (let block = 1; block <= 4; block++) flood.push(await admitted(port, `127.0.${block}.9`));
    open.push(...flood.map((conn) => conn.socket));
    await refusedAtOnce(port, '127.0.5.9');

    // One flood connection leaves; a deploy key takes its place and logs in, which gives the
    // place back: another newcomer fits beside the flood, and the one after it does not.
    flood[0]!.socket.destroy();
    await flood[0]!.closedWithin(1000);
    const client = new ssh2.Client();
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
      void readFile(key.file).then((privateKey) =>
        client.connect({ host: '127.0.0.1', port, localAddress: '127.0.6.9', username: 'git', privateKey }),
      );
    });
    try {
      open.push((await admitted(port, '127.0.7.9')).socket);
      await refusedAtOnce(port, '127.0.8.9');
    } finally {
      client.end();
    }
  });

  it('closes a connection that has not authenticated within the deadline, however it trickles', async () => {
    const port = ssh!.port;
    const silent = probe(port, '127.0.0.7');
    const banner = probe(port, '127.0.0.8');
    banner.socket.write('SSH-2.0-flood\r\n');
    const trickle = probe(port, '127.0.0.9');
    trickle.socket.write('SSH-2.0-slow');
    // A byte every 100 ms keeps the socket busy; the deadline is absolute, not an idle timer.
    const drip = setInterval(() => trickle.socket.write('x'), 100);
    try {
      const closed = await Promise.all([silent, banner, trickle].map((conn) => conn.closedWithin(5000)));
      for (const after of closed) {
        expect(after, 'held past the 1 s handshake deadline').toBeDefined();
        expect(after!).toBeGreaterThanOrEqual(800);
      }
    } finally {
      clearInterval(drip);
      for (const conn of [silent, banner, trickle]) conn.socket.destroy();
    }
  });
});

describe.each(PGLITE_ONLY)('SSH idle sessions on %s', (backend) => {
  let t: TestApp;
  let ssh: SshServer;
  let alice: RegisteredCreator;
  let key: SshKey;

  beforeAll(async () => {
    key = await sshKeygen('ed25519');
  });
  beforeEach(async () => {
    t = await createTestApp({
      backend,
      env: { SSH_HANDSHAKE_TIMEOUT_SECONDS: '3', SSH_IDLE_TIMEOUT_SECONDS: '2' },
    });
    ssh = await startSshServer(t.ctx, hostedRepoAccess(t.ctx), { port: 0, host: '127.0.0.1' });
    alice = await registerCreator(t);
  });
  afterEach(async () => {
    await ssh.close();
    await t.close();
  });

  /** An authenticated client that sends keepalives every 300 ms (traffic that resets the idle timer). */
  async function connectWithKeepalives() {
    const client = new ssh2.Client();
    const closedAt = new Promise<number>((resolve) => client.on('close', () => resolve(Date.now())));
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
      void readFile(key.file).then((privateKey) =>
        client.connect({
          host: '127.0.0.1',
          port: ssh.port,
          username: 'git',
          privateKey,
          keepaliveInterval: 300,
        }),
      );
    });
    return { client, closedAt };
  }

  it('closes an authenticated connection that runs no git command within the deadline, keepalives or not', async () => {
    const listing = await createHostedListing(t, alice.apiKey, key.publicKey);
    const idle = await connectWithKeepalives();
    const readyAt = Date.now();
    try {
      const heldFor = await Promise.race([idle.closedAt.then((at) => at - readyAt), sleep(8000)]);
      expect(heldFor, 'an authenticated connection held its slot with keepalives alone').toBeDefined();
      expect(heldFor as number).toBeLessThan(5000);
    } finally {
      idle.client.end();
    }

    // After its command ends, the same rule: one more command within the deadline, or closed.
    const used = await connectWithKeepalives();
    try {
      const channel = await new Promise<ssh2.ClientChannel>((resolve, reject) =>
        used.client.exec(`git-upload-pack '/${listing.owner}/${listing.slug}.git'`, (error, stream) =>
          error ? reject(error) : resolve(stream),
        ),
      );
      channel.on('data', () => {});
      const ended = new Promise<number>((resolve) => channel.once('close', () => resolve(Date.now())));
      channel.end('0000');
      const endedAt = await ended;
      const heldFor = await Promise.race([used.closedAt.then((at) => at - endedAt), sleep(8000)]);
      expect(heldFor, 'a connection held its slot after its command ended').toBeDefined();
      expect(heldFor as number).toBeLessThan(5000);
    } finally {
      used.client.end();
    }
  });

  it('keeps an authenticated session while bytes flow, and closes it once idle', async () => {
    const listing = await createHostedListing(t, alice.apiKey, key.publicKey);
    const client = new ssh2.Client();
    const closedAt = new Promise<number>((resolve) => client.on('close', () => resolve(Date.now())));
    let closed = false;
    client.on('close', () => {
      closed = true;
    });
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
      void readFile(key.file).then((privateKey) =>
        client.connect({ host: '127.0.0.1', port: ssh.port, username: 'git', privateKey }),
      );
    });
    try {
      const channel = await new Promise<ssh2.ClientChannel>((resolve, reject) =>
        client.exec(`git-upload-pack '/${listing.owner}/${listing.slug}.git'`, (error, stream) =>
          error ? reject(error) : resolve(stream),
        ),
      );
      await new Promise((resolve) => channel.once('data', resolve)); // the ref advertisement
      // Half a pkt-line, a byte every 500 ms: 4.5 s of slow traffic, past the 3 s handshake
      // deadline and twice the 2 s idle timeout; upload-pack waits for the rest.
      for (const byte of '0032want ') {
        await sleep(500);
        expect(closed, 'cut while bytes were flowing').toBe(false);
        channel.write(byte);
      }
      const lastByte = Date.now();
      const idleFor = await Promise.race([closedAt.then((at) => at - lastByte), sleep(8000)]);
      expect(idleFor, 'an idle session was held open').toBeDefined();
      expect(idleFor as number).toBeGreaterThanOrEqual(1500);
    } finally {
      client.end();
    }
  });
});
