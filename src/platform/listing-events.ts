import { EventEmitter } from 'node:events';

/**
 * In-process notice that a listing's public face changed (price, text, status, a new passing
 * release), so caches of public documents in this process drop it at once. Other processes rely
 * on those caches' short lifetimes.
 */
const listingEvents = new EventEmitter<{ changed: [{ owner: string; slug: string }] }>();
// One listener per open context's cache; tests open many contexts in one process.
listingEvents.setMaxListeners(0);

export function announceListingChanged(owner: string, slug: string): void {
  listingEvents.emit('changed', { owner, slug });
}

/** Calls `listener` on every change until the returned function is called. */
export function onListingChanged(listener: (listing: { owner: string; slug: string }) => void): () => void {
  listingEvents.on('changed', listener);
  return () => listingEvents.off('changed', listener);
}
