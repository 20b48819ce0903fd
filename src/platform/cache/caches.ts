import type { ListingChange, ListingEvents } from './listing-events.js';
import { ReadCache, type ReadCacheOptions } from './read-cache.js';

/**
 * Caches that belong to one application context rather than to a module, so two apps in one
 * process (tests, or a server and a CLI command) never serve each other's documents. A module
 * declares what it caches with `cacheSlot(create)`; the context's `Caches` builds the value on
 * first use and keeps it until the context closes.
 */
export interface CacheSlot<T> {
  readonly create: (caches: Caches) => T;
}

export function cacheSlot<T>(create: (caches: Caches) => T): CacheSlot<T> {
  return { create };
}

/**
 * A slot holding one `ReadCache` that a listing change invalidates: by its key (`owner/slug`, or
 * keys starting `owner/slug\n`) when `keyedByListing`, else whole (documents listing many listings).
 */
export function listingCacheSlot<V extends {}>(
  options: ReadCacheOptions & { keyedByListing: boolean },
): CacheSlot<ReadCache<V>> {
  return cacheSlot((caches) => {
    const cache = new ReadCache<V>(options);
    caches.onListingChanged((change) => cache.dropListing(change, options.keyedByListing));
    return cache;
  });
}

export class Caches {
  private readonly values = new Map<CacheSlot<unknown>, unknown>();
  private readonly cleanups: (() => void)[] = [];

  constructor(readonly listingEvents: ListingEvents) {}

  get<T>(slot: CacheSlot<T>): T {
    if (!this.values.has(slot)) this.values.set(slot, slot.create(this));
    return this.values.get(slot) as T;
  }

  /** Calls `listener` on every listing change until the context closes. */
  onListingChanged(listener: (change: ListingChange) => void): void {
    this.onClose(this.listingEvents.on(listener));
  }

  /** Runs `cleanup` when the context closes (a cache unsubscribing from process-wide events). */
  onClose(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  close(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.values.clear();
  }
}
