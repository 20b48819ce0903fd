import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { peerKey } from '../platform/peer-key.js';

export interface ConnectionCaps {
  total: number;
  perAddress: number;
}

type Cap = 'total' | 'per_address';

/** At most one refusal line per cap in this interval, so a flood does not flood the log. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * Counts open connections overall and per client address, and closes a new one at once, before
 * any protocol work, when either cap is reached. The counts are this process's own file
 * descriptors, which no other process shares, so they are kept in memory.
 */
export class ConnectionGate {
  private total = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly lastLogged = new Map<Cap, number>();
  private readonly unlogged = new Map<Cap, number>();

  constructor(
    private readonly caps: ConnectionCaps,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** True when `socket` is admitted (and counted until it closes); otherwise it is already destroyed. */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress;
    if (!address) {
      // Gone before we saw it.
      socket.destroy();
      return false;
    }
    const key = peerKey(address);
    const fromAddress = this.byAddress.get(key) ?? 0;
    const cap: Cap | undefined =
      fromAddress >= this.caps.perAddress
        ? 'per_address'
        : this.total >= this.caps.total
          ? 'total'
          : undefined;
    if (cap) {
      socket.destroy();
      this.logRefusal(cap, address);
      return false;
    }
    this.total += 1;
    this.byAddress.set(key, fromAddress + 1);
    socket.once('close', () => {
      this.total -= 1;
      const left = (this.byAddress.get(key) ?? 1) - 1;
      if (left > 0) this.byAddress.set(key, left);
      else this.byAddress.delete(key);
    });
    return true;
  }

  private logRefusal(cap: Cap, address: string): void {
    const now = Date.now();
    if (now - (this.lastLogged.get(cap) ?? 0) < REFUSAL_LOG_INTERVAL_MS) {
      this.unlogged.set(cap, (this.unlogged.get(cap) ?? 0) + 1);
      return;
    }
    this.lastLogged.set(cap, now);
    const limit = cap === 'total' ? this.caps.total : this.caps.perAddress;
    this.log.warn(
      { cap, limit, address, refused_since_last_line: this.unlogged.get(cap) ?? 0 },
      'ssh connection refused',
    );
    this.unlogged.set(cap, 0);
  }
}
