import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../../platform/blobs/blobs.js';
import type { EarlierZip } from './reusable-entries.js';

/** What a release row says of its zip; `releasesBelow(…).at(-1)` is the one to reuse. */
export interface StoredZip {
  commitSha: string;
  artifactKey: string | null;
  artifactSha256: string | null;
}

/**
 * Copies an earlier release's zip out of the blob store into `dir` (the cut's temporary folder),
 * for `buildArtifact`'s `reuse`: the worker reads it at random, which neither store offers, and
 * S3 would answer one request per entry. The bytes are checked against the release's SHA-256 on
 * the way, and the zip is paired with that same release's commit. Rejects when the release has no
 * zip, the blob is missing or its bytes differ: the caller then builds without reuse.
 */
export async function fetchEarlierZip(
  blobs: BlobStore,
  release: StoredZip,
  dir: string,
): Promise<EarlierZip> {
  if (!release.artifactKey || !release.artifactSha256) throw new Error('the earlier release has no zip');
  const zipFile = path.join(dir, 'earlier.zip');
  const hash = createHash('sha256');
  const { stream } = await blobs.open(release.artifactKey);
  await pipeline(
    stream,
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    }),
    createWriteStream(zipFile),
  );
  if (hash.digest('hex') !== release.artifactSha256)
    throw new Error(`the earlier zip ${release.artifactKey} is not the bytes its release recorded`);
  return { commit: release.commitSha, zipFile };
}
