import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A response body serialised once (at start-up or at release time) and served many times: no
 * per-request validation or stringify, a strong ETag, and 304 for a client that already has it.
 * The body is kept as bytes: a string would be measured and encoded again on every send.
 */
export interface Prebuilt {
  body: Buffer;
  etag: string;
  contentType: string;
}

export function prebuilt(body: unknown, contentType = 'application/json; charset=utf-8'): Prebuilt {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  return { body: Buffer.from(text, 'utf8'), etag, contentType };
}

/** RFC 9110 If-None-Match: a list of tags or `*`; weak comparison, as the RFC requires for it. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export function sendPrebuilt(
  request: FastifyRequest,
  reply: FastifyReply,
  doc: Prebuilt,
  cacheControl: string,
): FastifyReply {
  reply.header('etag', doc.etag).header('cache-control', cacheControl);
  if (matchesIfNoneMatch(request.headers['if-none-match'], doc.etag)) return reply.code(304).send();
  return reply.type(doc.contentType).send(doc.body);
}

/** Sends JSON the service serialised itself (sent as it is, without the route's serializer). */
export function sendJsonText(reply: FastifyReply, json: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
