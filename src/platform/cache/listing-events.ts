import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';

/** A listing whose public face changed, or `all` when changes may have been missed. */
export type ListingChange = { owner: string; slug: string } | 'all';

/** How changes travel between processes: PostgreSQL `NOTIFY` (src/runtime.ts wires it). */
export interface ListingChangeBus {
  publish(payload: string): void;
}

interface Wire {
  /** The announcing process: it already applied the change and skips its own echo. */
  from: string;
  owner?: string;
  slug?: string;
}

/**
 * Notice that a listing's public face changed (price, text, status, a release, a flag), so the
 * caches of public documents drop it. In this process a change is seen before `announce` returns,
 * so the next request reads it. Other processes sharing the database hear of it through the bus
 * (PostgreSQL `NOTIFY`, delivered when the announcing transaction has committed); a process that
 * lost its listening connection hears `all` when it reconnects, since it may have missed some.
 */
export class ListingEvents {
  private readonly emitter = new EventEmitter<{ changed: [ListingChange] }>();
  private readonly id = randomUUID();
  private bus: ListingChangeBus | undefined;

  constructor() {
    // One listener per cache slot of this context.
    this.emitter.setMaxListeners(0);
  }

  /** Sends this process's changes to the others from now on. */
  connect(bus: ListingChangeBus): void {
    this.bus = bus;
  }

  announce(owner: string, slug: string): void {
    this.emitter.emit('changed', { owner, slug });
    this.bus?.publish(JSON.stringify({ from: this.id, owner, slug } satisfies Wire));
  }

  /** A change heard from another process (the bus's payload), or `all`. */
  deliver(payload: string | 'all'): void {
    if (payload === 'all') {
      this.emitter.emit('changed', 'all');
      return;
    }
    let wire: Wire;
    try {
      wire = JSON.parse(payload) as Wire;
    } catch {
      this.emitter.emit('changed', 'all');
      return;
    }
    if (wire.from === this.id) return;
    this.emitter.emit(
      'changed',
      typeof wire.owner === 'string' && typeof wire.slug === 'string'
        ? { owner: wire.owner, slug: wire.slug }
        : 'all',
    );
  }

  /** Calls `listener` on every change until the returned function is called. */
  on(listener: (change: ListingChange) => void): () => void {
    this.emitter.on('changed', listener);
    return () => this.emitter.off('changed', listener);
  }
}
