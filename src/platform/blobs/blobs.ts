import type { Readable } from 'node:stream';

/**
 * Where artifacts (release zips, SBOMs) live: a local directory by default, S3-compatible storage
 * when configured. Keys are `/`-separated relative paths chosen by the caller; objects are written
 * once and never changed, so a retried write of the same key with the same bytes is harmless.
 */
export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** Stores the file at `file` under `key`. */
  putFile(key: string, file: string, contentType: string): Promise<void>;
  /** Stores a small in-memory value under `key`. */
  putBytes(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** Streams the object; rejects with `BlobNotFoundError` when there is none. */
  open(key: string): Promise<{ stream: Readable; sizeBytes: number }>;
  /** A URL that GETs the object without credentials for `seconds` (S3 only). */
  presignGet?(key: string, seconds: number): Promise<string>;
  /** Resolves when the store can be reached (the bucket answers, the directory is there). */
  ping(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No blob under ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

/** Keys come from our own code, but a bad one must never escape the store's root. */
export function assertBlobKey(key: string): void {
  if (
    !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(key) ||
    key.split('/').some((part) => /^\.+$/.test(part))
  ) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
}
