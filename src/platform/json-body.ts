import type { FastifyInstance } from 'fastify';

/**
 * An empty body sent as `application/json` is read as no body. Some clients send that header on
 * every request, DELETE and bodiless POSTs included; Fastify's parser refuses such a request with a
 * 400 before its route can answer (a creator deleting another's listing would learn `invalid_request`
 * instead of SPEC.md's 404). A route that needs a body still refuses its absence, in validation.
 * Everything else is Fastify's own parser, prototype-poisoning checks included.
 */
export function readEmptyJsonAsNoBody(app: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string; // parseAs: 'string'
    // A line break alone, as some clients send for "no body", is no body either.
    if (text.trim() === '') done(null, undefined);
    else
      parse(request, text, (error, value) => {
        // Fastify's parser says "invalid JSON" of a poisoned body too; on that path only, tell the
        // client which it was.
        done(error && isJson(text) ? forbiddenKey() : error, value);
      });
  });
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
