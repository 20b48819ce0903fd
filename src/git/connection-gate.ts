import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { ConnectionCaps } from '../config.js';
import { peerBlock, peerKey } from '../platform/limits/peer-key.js';

type Cap = 'total' | 'per_address' | 'per_block' | 'unauthenticated';

/** A block refused by one cap is logged at most once in this interval, with how many refusals the line stands for. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;
/** Blocks whose last refusal line is remembered; a flood from more blocks than this logs more often. */
const REFUSAL_LOG_BLOCKS = 10_000;

interface Connection {
  socket: Socket;
  address: string;
  block: string;
  /** Counted until the socket closes, or until it is evicted, whichever comes first. */
  counted: boolean;
}

/**
 * Decides which SSH connections may open, before any protocol work: connections over a cap are
 * closed at once. Unauthenticated connections may hold only `caps.unauthenticated` places, so the
 * rest of the total is always there for deploy keys that have logged in; and when those places
 * are full, a newcomer from a block holding fewer of them takes the place of the oldest
 * connection of the block holding the most. A flood from forty addresses therefore cannot keep a
 * creator from connecting; one from more blocks than there are places still can, until the
 * handshake deadline closes what it holds (docs/SECURITY.md).
 *
 * The counts are this process's own file descriptors, which no other process shares, so they
 * are kept in memory.
 */
export class ConnectionGate {
  private total = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly byBlock = new Map<string, number>();
  /** Unauthenticated connections per block, oldest first (a Set keeps insertion order). */
  private readonly unauthenticated = new Map<string, Set<Connection>>();
  private unauthenticatedCount = 0;
  private readonly connections = new WeakMap<Socket, Connection>();
  private readonly refusalLog = new LRUCache<string, { at: number; unlogged: number }>({
    max: REFUSAL_LOG_BLOCKS,
  });

  constructor(
    private readonly caps: ConnectionCaps,
    private readonly log: FastifyBaseLogger,
    /** Told of every refusal (logged lines are thinned, this is not): the refusal metric. */
    private readonly onRefused: (cap: Cap) => void = () => {},
  ) {}

  /** True when `socket` is admitted (and counted until it closes); otherwise it is already destroyed. */
  admit(socket: Socket): boolean {
    const remote = socket.remoteAddress;
    if (!remote) {
      // Gone before we saw it.
      socket.destroy();
      return false;
    }
    const address = peerKey(remote);
    const block = peerBlock(remote);
    const cap = this.capReached(address, block);
    if (cap) {
      socket.destroy();
      this.onRefused(cap);
      this.logRefusal(cap, remote, block);
      return false;
    }
    const connection: Connection = { socket, address, block, counted: true };
    this.connections.set(socket, connection);
    this.total += 1;
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    this.byBlock.set(block, (this.byBlock.get(block) ?? 0) + 1);
    this.holdUnauthenticated(connection);
    socket.once('close', () => this.release(connection));
    return true;
  }

  /** `socket` has logged in: it no longer holds one of the unauthenticated places. */
  authenticated(socket: Socket): void {
    const connection = this.connections.get(socket);
    if (connection) this.leaveUnauthenticated(connection);
  }

  private capReached(address: string, block: string): Cap | undefined {
    if ((this.byAddress.get(address) ?? 0) >= this.caps.perAddress) return 'per_address';
    if ((this.byBlock.get(block) ?? 0) >= this.caps.perBlock) return 'per_block';
    const full = this.total >= this.caps.total || this.unauthenticatedCount >= this.caps.unauthenticated;
    if (!full || this.evictFor(block)) return undefined;
    return this.total >= this.caps.total ? 'total' : 'unauthenticated';
  }

  /**
   * Frees an unauthenticated place for a newcomer from `block`: closes the oldest unauthenticated
   * connection of the block holding the most, if that block holds more than the newcomer's
   * would once admitted. False when no block does (or the total is full of logged-in connections).
   */
  private evictFor(block: string): boolean {
    let most = (this.unauthenticated.get(block)?.size ?? 0) + 1;
    let victims: Set<Connection> | undefined;
    for (const held of this.unauthenticated.values()) {
      if (held.size > most) {
        most = held.size;
        victims = held;
      }
    }
    const oldest = victims?.values().next().value;
    if (!oldest) return false;
    this.log.debug(
      { block: oldest.block, for: block },
      'ssh: an unauthenticated connection gave its place up',
    );
    this.release(oldest);
    oldest.socket.destroy();
    return true;
  }

  private holdUnauthenticated(connection: Connection): void {
    const held = this.unauthenticated.get(connection.block) ?? new Set();
    this.unauthenticated.set(connection.block, held);
    held.add(connection);
    this.unauthenticatedCount += 1;
  }

  private leaveUnauthenticated(connection: Connection): void {
    const held = this.unauthenticated.get(connection.block);
    if (!held?.delete(connection)) return;
    this.unauthenticatedCount -= 1;
    if (held.size === 0) this.unauthenticated.delete(connection.block);
  }

  /** Gives back every place `connection` held, once (an evicted connection closes later). */
  private release(connection: Connection): void {
    if (!connection.counted) return;
    connection.counted = false;
    this.leaveUnauthenticated(connection);
    this.total -= 1;
    decrement(this.byAddress, connection.address);
    decrement(this.byBlock, connection.block);
  }

  private logRefusal(cap: Cap, address: string, block: string): void {
    const now = Date.now();
    const key = `${cap} ${block}`;
    const last = this.refusalLog.get(key);
    if (last && now - last.at < REFUSAL_LOG_INTERVAL_MS) {
      last.unlogged += 1;
      return;
    }
    const limits: Record<Cap, number> = {
      total: this.caps.total,
      per_address: this.caps.perAddress,
      per_block: this.caps.perBlock,
      unauthenticated: this.caps.unauthenticated,
    };
    this.log.warn(
      { cap, limit: limits[cap], address, block, refused_since_last_line: last?.unlogged ?? 0 },
      'ssh connection refused',
    );
    this.refusalLog.set(key, { at: now, unlogged: 0 });
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
