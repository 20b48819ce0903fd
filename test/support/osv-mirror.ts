import { readFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import yazl from 'yazl';
import { SUPPORTED_ECOSYSTEMS } from '../../src/scan/osv.js';
import { ROOT } from './process.js';

/** A real OSV record committed under test/fixtures/osv, by id. */
export function osvFixture(id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/osv', `${id}.json`), 'utf8'));
}

/** An OSV export as the bucket serves it: one `<id>.json` per record (stored, or deflated). */
export async function exportZip(records: Array<Record<string, unknown>>, compress = true): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const record of records) {
    zip.addBuffer(Buffer.from(JSON.stringify(record, null, 2)), `${record.id}.json`, { compress });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A stand-in for the OSV exports bucket (`<url>/<ecosystem>/all.zip`) over real HTTP, answering
 * conditional requests as the bucket does: an ETag and Last-Modified on every export, 304 when
 * If-None-Match names the current one. It records every request's path and headers.
 */
export class OsvMirror {
  readonly requests: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  private readonly exports = new Map<string, { body: Buffer; etag: string; lastModified: string }>();
  private revision = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OsvMirror> {
    let mirror: OsvMirror | undefined;
    const server = http.createServer((req, res) => mirror!.answer(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    mirror = new OsvMirror(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return mirror;
  }

  /** Serves `body` (or the records zipped) as the ecosystem's export, under a new ETag. */
  async publish(ecosystem: string, content: Array<Record<string, unknown>> | Buffer): Promise<void> {
    this.revision += 1;
    this.exports.set(ecosystem, {
      body: Buffer.isBuffer(content) ? content : await exportZip(content),
      etag: `"export-${this.revision}"`,
      lastModified: new Date(Date.UTC(2026, 10, 1, 0, this.revision)).toUTCString(),
    });
  }

  /** Every ecosystem the sync reads, with these records (an empty export where none are given). */
  async publishAll(records: Partial<Record<string, Array<Record<string, unknown>>>>): Promise<void> {
    for (const ecosystem of SUPPORTED_ECOSYSTEMS) await this.publish(ecosystem, records[ecosystem] ?? []);
  }

  etagOf(ecosystem: string): string | undefined {
    return this.exports.get(ecosystem)?.etag;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests.push({ path: req.url ?? '', headers: req.headers });
    const match = /^\/([^/]+)\/all\.zip$/.exec(req.url ?? '');
    const found = match ? this.exports.get(decodeURIComponent(match[1]!)) : undefined;
    if (!found) {
      res.writeHead(404).end();
      return;
    }
    const validators = { etag: found.etag, 'last-modified': found.lastModified };
    if (req.headers['if-none-match'] === found.etag) {
      res.writeHead(304, validators).end();
      return;
    }
    res.writeHead(200, { ...validators, 'content-type': 'application/zip' }).end(found.body);
  }
}
