import { EventEmitter } from 'node:events';

/**
 * In-process notice that a listing's public face changed (price, text, status, a new passing
 * release), so caches of public documents in this process drop it at once. Other processes rely
 * on those caches' short lifetimes.
 */
export const listingEvents = new EventEmitter<{ changed: [{ owner: string; slug: string }] }>();
listingEvents.setMaxListeners(0);

export function announceListingChanged(owner: string, slug: string): void {
  listingEvents.emit('changed', { owner, slug });
}
