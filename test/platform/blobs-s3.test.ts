import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError } from '../../src/platform/blobs/blobs.js';
import { s3BlobStore } from '../../src/platform/blobs/s3.js';
import { freePort } from '../support/process.js';

/**
 * A stand-in for an S3-compatible store: path-style PutObject and GetObject on one bucket, objects
 * in memory, NoSuchKey as S3 answers it. Signatures are not checked; the SDK's own requests are.
 */
function startS3StandIn(bucket: string): Promise<{ server: Server; url: string; requests: string[] }> {
  const objects = new Map<string, { body: Buffer; type: string }>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://s3');
    requests.push(`${req.method} ${url.pathname}`);
    const prefix = `/${bucket}/`;
    if (!url.pathname.startsWith(prefix)) {
      res.writeHead(404).end();
      return;
    }
    const key = decodeURIComponent(url.pathname.slice(prefix.length));
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        objects.set(key, { body: Buffer.concat(chunks), type: String(req.headers['content-type']) });
        res.writeHead(200, { etag: '"x"' }).end();
      });
      return;
    }
    const object = objects.get(key);
    if (!object) {
      res
        .writeHead(404, { 'content-type': 'application/xml' })
        .end('<?xml version="1.0"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>');
      return;
    }
    res
      .writeHead(200, { 'content-type': object.type, 'content-length': object.body.length })
      .end(object.body);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }),
    ),
  );
}

describe('S3 blob store', () => {
  let s3: Awaited<ReturnType<typeof startS3StandIn>>;
  beforeAll(async () => {
    s3 = await startS3StandIn('artifacts');
  });
  afterAll(() => new Promise<void>((resolve) => s3.server.close(() => resolve())));

  const store = () =>
    s3BlobStore({
      bucket: 'artifacts',
      region: 'us-east-1',
      endpoint: s3.url,
      accessKeyId: 'test',
      secretAccessKey: 'test-secret',
      forcePathStyle: true,
      prefix: 'repo402',
    });

  it('uploads a file, streams it back, and presigns a GET that works without credentials', async () => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'repo402-s3-')), 'a.zip');
    await writeFile(file, Buffer.from('zip bytes'));
    await store().putFile('releases/x/1.0.0/a.zip', file, 'application/zip');
    expect(s3.requests).toContain('PUT /artifacts/repo402/releases/x/1.0.0/a.zip');
    const { stream, sizeBytes } = await store().open('releases/x/1.0.0/a.zip');
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('zip bytes');
    expect(sizeBytes).toBe(9);
    const url = await store().presignGet!('releases/x/1.0.0/a.zip', 300);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('300');
    expect(new URL(url).searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const fetched = await fetch(url);
    expect(await fetched.text()).toBe('zip bytes');
  });

  it('reports a missing object as BlobNotFoundError and refuses keys that could escape', async () => {
    await expect(store().open('releases/none.zip')).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(store().putBytes('../etc/passwd', Buffer.from('x'), 'text/plain')).rejects.toThrow(
      'invalid blob key',
    );
  });
});

/**
 * Issue 39: the servers reach the store at one address and buyers at another. A download URL is
 * signed for the public host (SigV4 signs the Host header, so a URL signed for the internal one
 * cannot be edited into a public one), and a real S3 API server (s3rver) serves it there.
 */
describe('S3 blob store with a public endpoint', () => {
  let s3: S3rver;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    s3 = new S3rver({
      address: '127.0.0.1',
      port,
      directory: await mkdtemp(path.join(os.tmpdir(), 'repo402-s3rver-')),
      silent: true,
      configureBuckets: [{ name: 'artifacts' }],
    });
    await s3.run();
  });
  afterAll(() => s3?.close());

  const store = (publicEndpoint?: string) =>
    s3BlobStore({
      bucket: 'artifacts',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      publicEndpoint,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });

  it('presigns download URLs for S3_PUBLIC_ENDPOINT, valid there', async () => {
    await store().putBytes('releases/y/1.0.0/a.zip', Buffer.from('public bytes'), 'application/zip');
    const url = new URL(await store(`http://localhost:${port}`).presignGet!('releases/y/1.0.0/a.zip', 300));
    expect(url.host).toBe(`localhost:${port}`);
    const fetched = await fetch(url);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe('public bytes');
  });
});
