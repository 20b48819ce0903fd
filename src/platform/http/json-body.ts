import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

const KIB = 1024;

/**
 * The largest body each kind of route reads, sized to the largest valid body it accepts (text
 * counted at three UTF-8 bytes a character), so a client pays for bytes only up to what some
 * valid request could need. Each route's figure is in the OpenAPI document
 * (`x-body-limit-bytes`), and a test fills every field to its maximum and sends it.
 */
export const BODY_LIMITS = {
  /** No body, or a few short fields (sync, licence, publish, DELETE): the app's default. */
  small: 4 * KIB,
  /** One signed challenge; a smart wallet's signature may be 20,000 hex characters. */
  signed: 32 * KIB,
  /** Two signatures (a payout change), listing text and an SSH key, or one MCP message. */
  large: 64 * KIB,
} as const;

/**
 * How deep arrays and objects may nest in a JSON body. No route's body nests deeper than four
 * levels (an MCP call's arguments); `JSON.parse` of a megabyte of `[` costs ~100 ms of the one
 * main thread, a scan of it ~1 ms, so depth is checked before anything is parsed.
 */
export const JSON_MAX_DEPTH = 32;

/**
 * The app's JSON reader: Fastify's own parser (its prototype-poisoning checks included) behind a
 * nesting-depth scan, and an empty body read as no body. Some clients send `application/json` on
 * every request, DELETE and bodiless POSTs included; Fastify's parser refuses an empty body with a
 * 400 before its route can answer (a creator deleting another's listing would learn
 * `invalid_request` instead of SPEC.md's 404). A route that needs a body still refuses its
 * absence, in validation.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string; // parseAs: 'string'
    // A line break alone, as some clients send for "no body", is no body either.
    if (text.trim() === '') done(null, undefined);
    else if (nestsDeeperThan(text, JSON_MAX_DEPTH)) done(tooDeep(), undefined);
    else
      parse(request, text, (error, value) => {
        // Fastify's parser says "invalid JSON" of a poisoned body too; on that path only, tell the
        // client which it was.
        done(error && isJson(text) ? forbiddenKey() : error, value);
      });
  });
  // Before @fastify/swagger reads the routes: each operation with a body names its limit.
  const defaultLimit = app.initialConfig.bodyLimit ?? BODY_LIMITS.small;
  app.addHook('onRoute', (route) => {
    if (route.schema?.body) {
      (route.schema as Record<string, unknown>)['x-body-limit-bytes'] = route.bodyLimit ?? defaultLimit;
    }
  });
}

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether arrays and objects in `text` nest deeper than `maxDepth`, brackets inside strings not
 * counted. Reads each character once and builds nothing; malformed JSON is left to the parser.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/**
 * `JSON.parse` for text a client sent outside a body (a header's base64 JSON): refused, as a
 * `SyntaxError`, past `JSON_MAX_DEPTH` before any parsing.
 */
export function parseClientJson(text: string): unknown {
  if (nestsDeeperThan(text, JSON_MAX_DEPTH)) {
    throw new SyntaxError(`nested deeper than ${JSON_MAX_DEPTH} levels of arrays and objects`);
  }
  return JSON.parse(text);
}

function tooDeep(): AppError {
  return AppError.invalid([
    { field: 'body', reason: `nested deeper than ${JSON_MAX_DEPTH} levels of arrays and objects` },
  ]);
}

/** Whether `text` parses as JSON, after a byte-order mark, which Fastify's parser also allows. */
function isJson(text: string): boolean {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}

/** The error handler reads it as a refused prototype key in the body (`invalid_request`). */
function forbiddenKey(): Error {
  return Object.assign(new SyntaxError('Object contains forbidden prototype property'), { statusCode: 400 });
}
