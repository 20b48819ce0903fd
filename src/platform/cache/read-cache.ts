import { LRUCache } from 'lru-cache';
import type { ListingChange } from './listing-events.js';

export interface ReadCacheOptions {
  max: number;
  /** The longest another process may serve a value after a change it did not hear of. */
  ttlMs: number;
}

/**
 * Values read from the database for the public read paths, by key (`owner/slug`, usually), with
 * three guarantees the hot paths rely on:
 * - one load per key at a time: a burst of requests for a missing key waits on one query, so fifty
 *   connections do not queue fifty identical reads on PGlite's single connection;
 * - a change invalidates at once: `drop` bumps the generation, and a load that started before it
 *   answers its own waiters but is never stored, so the next request reads after the change;
 * - nothing lives longer than `ttlMs`, the bound for a change announced in a process whose notice
 *   never arrived.
 * Failed loads (a `not_found`, say) are not kept.
 */
export class ReadCache<V extends {}> {
  private readonly values: LRUCache<string, V>;
  private readonly loading = new Map<string, Promise<V>>();
  private generation = 0;

  constructor(options: ReadCacheOptions) {
    this.values = new LRUCache<string, V>({ max: options.max, ttl: options.ttlMs, ttlAutopurge: false });
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.values.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const promise = load()
      .then((value) => {
        if (this.generation === generation) this.values.set(key, value);
        return value;
      })
      .finally(() => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
      });
    this.loading.set(key, promise);
    return promise;
  }

  /** Forgets `key` (or everything), including a load in flight: later requests read afresh. */
  drop(key?: string): void {
    this.generation++;
    if (key === undefined) {
      this.values.clear();
      this.loading.clear();
    } else {
      this.values.delete(key);
      this.loading.delete(key);
    }
  }

  /** Drops what a listing change makes stale, for caches keyed by `owner/slug` (and maybe more after it). */
  dropListing(change: ListingChange, keyedByListing = true): void {
    if (change === 'all' || !keyedByListing) {
      this.drop();
      return;
    }
    const prefix = `${change.owner}/${change.slug}`;
    this.drop(prefix);
    for (const key of [...this.values.keys(), ...this.loading.keys()]) {
      if (key.startsWith(`${prefix}\n`)) this.drop(key);
    }
  }
}
