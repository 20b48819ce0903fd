import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ErrorBody, errorBody, type Issue, isAppError } from '../errors.js';
import { addCorsHeadersOnPublicPath } from './cors.js';
import { pageHeaders } from './page.js';

/**
 * The HTML page a person's browser is shown instead of the error body, or undefined to send the
 * body. Which requests get one, and its words, are the site's (src/public/error-pages.tsx), handed
 * down at composition; without it every failure is the body.
 */
export type ErrorPage = (request: FastifyRequest, error: AppError) => string | undefined;

/** An error page is static text: no script, no form, nothing from elsewhere. */
const ERROR_PAGE_HEADERS = { ...pageHeaders(), vary: 'Accept' };

/**
 * The failure as its page when `errorPage` gives one, else as `body`: the spec's error body, as an
 * object for a route's serializer or, before routing, already serialised.
 */
function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  appError: AppError,
  errorPage: ErrorPage | undefined,
  body: ErrorBody | string,
) {
  addCorsHeadersOnPublicPath(request, reply);
  reply.code(appError.status).headers({ ...appError.headers, 'cache-control': 'no-store' });
  let page: string | undefined;
  try {
    page = errorPage?.(request, appError);
  } catch (renderError) {
    // A page that cannot be drawn must not cost the answer: the body still says what happened.
    request.log.error({ err: renderError }, 'error page failed');
  }
  if (page !== undefined)
    return reply.headers(ERROR_PAGE_HEADERS).type('text/html; charset=utf-8').send(page);
  return reply.type('application/json; charset=utf-8').send(body);
}

/**
 * Every failure leaves as the spec's error body: our own AppErrors, Fastify's parser and
 * validation errors, unknown routes, and faults we did not foresee (as `internal`, without a stack).
 * A person's browser asking for one of the site's pages gets the same status as a page instead
 * (`errorPage`, D-117).
 */
export function installErrorHandling(app: FastifyInstance, baseUrl: string, errorPage?: ErrorPage): void {
  trackLastExchange(app.server);
  app.setNotFoundHandler((request) => {
    const path = request.url.split('?')[0]!;
    throw new AppError('not_found', {
      message: `No route for ${request.method} ${path.slice(0, 200)}: this route does not exist${
        path.startsWith('/api/') ? `; the API's routes are listed in ${baseUrl}/api/openapi.json` : ''
      }`,
    });
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let appError: AppError;
    try {
      // Each route has its own body limit (the server's where it sets none): name the one that applied.
      appError = toAppError(error, request.routeOptions.bodyLimit);
    } catch (mappingError) {
      request.log.error({ err: mappingError }, 'error mapping failed');
      appError = new AppError('internal');
    }
    if (appError.code === 'internal') {
      request.log.error({ err: error }, 'request failed');
    } else if (appError.status >= 500) {
      // paused, settlement_timeout: answers the service chose, not faults.
      request.log.info({ code: appError.code }, 'request answered unavailable');
    } else if (appError.code === 'invalid_request') {
      request.log.info({ issues: appError.details?.issues }, 'invalid request');
    }
    return sendError(request, reply, appError, errorPage, errorBody(baseUrl, appError));
  });
}

/**
 * Errors Fastify raises before routing, outside the error handler. An undecodable URL is a
 * malformed request; a path segment longer than the router's limit names nothing the service has
 * (handles, slugs, ids, versions and download tokens are all far shorter), so it is not found, as
 * every route with path parameters documents, rather than a 400 that routes such as
 * `GET /{owner}/{slug}` never promise.
 */
export function frameworkErrorHandler(baseUrl: string, errorPage?: ErrorPage) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const appError =
      error.code === 'FST_ERR_BAD_URL'
        ? AppError.invalid([{ field: 'url', reason: 'not a valid URL' }])
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new AppError('not_found', { message: 'No resource has a path segment this long' })
          : new AppError('internal', { cause: error });
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed before routing');
    reply.header('x-request-id', request.id);
    sendError(request, reply, appError, errorPage, JSON.stringify(errorBody(baseUrl, appError)));
  };
}

/** What Fastify's own errors mean in the spec's vocabulary. */
function toAppError(error: FastifyError | Error, bodyLimitBytes: number): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as FastifyError;

  if (hasZodFastifySchemaValidationErrors(fastifyError)) {
    return AppError.invalid(
      fastifyError.validation.flatMap((v): Issue[] => {
        const path = v.instancePath.split('/').filter(Boolean);
        const unknownKeys =
          v.keyword === 'unrecognized_keys' ? (v.params.keys as string[] | undefined) : undefined;
        if (unknownKeys?.length) {
          return unknownKeys.map((key) => ({ field: [...path, key].join('.'), reason: 'unknown field' }));
        }
        return [{ field: fieldName(fastifyError.validationContext, path), reason: v.message ?? 'invalid' }];
      }),
    );
  }
  const issue = parserIssue(fastifyError, bodyLimitBytes);
  if (issue) return AppError.invalid([issue]);

  const status = fastifyError.statusCode ?? 500;
  if (status === 404) return new AppError('not_found');
  if (status === 429) return new AppError('rate_limited');
  if (status === 503) return new AppError('paused');
  if (status >= 400 && status < 500) {
    return AppError.invalid([{ field: 'request', reason: fastifyError.message }]);
  }
  return new AppError('internal', {
    message: 'Internal server error; the x-request-id response header identifies this failure',
    cause: error,
  });
}

function fieldName(context: string | undefined, path: string[]): string {
  if (path.length > 0) return path.join('.');
  return context === 'querystring' ? 'query' : (context ?? 'request');
}

function parserIssue(error: FastifyError, bodyLimitBytes: number): Issue | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { field: 'body', reason: `larger than this route's limit of ${bodyLimitBytes} bytes` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { field: 'content-type', reason: 'unsupported media type; send application/json' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { field: 'body', reason: 'not valid JSON' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { field: 'content-length', reason: 'does not match the body' };
    default:
      // JSON.parse failures and prototype-poisoning refusals surface as plain 400 errors.
      if (
        error instanceof SyntaxError ||
        (error.statusCode === 400 && /JSON|prototype/i.test(error.message))
      ) {
        return {
          field: 'body',
          reason: /prototype/i.test(error.message)
            ? 'a __proto__ or constructor.prototype key is refused'
            : 'not valid JSON',
        };
      }
      return undefined;
  }
}

/** A whole HTTP/1.1 response carrying the error body, for sockets Fastify never sees. */
function rawErrorResponse(baseUrl: string, error: AppError): string {
  const body = JSON.stringify(errorBody(baseUrl, error));
  const reason = STATUS_CODES[error.status] ?? 'Error';
  return (
    `HTTP/1.1 ${error.status} ${reason}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${randomUUID()}\r\n` +
    'cache-control: no-store\r\n' +
    'connection: close\r\n\r\n' +
    body
  );
}

/**
 * Node rejects some requests before Fastify sees them (malformed request line, oversized headers,
 * timeouts). They still get the error body, on a connection we then close. A connection on which
 * no request has begun is closed without a word: browsers open connections ahead of the requests
 * they will carry, and a request sent just as an unprompted answer arrives would read that answer
 * as its own (a person would see an error page); a silently closed connection is retried.
 */
export function clientErrorHandler(baseUrl: string) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (
      error.code === 'ECONNRESET' ||
      !socket.writable ||
      answeredBeforeItsBody(socket) ||
      (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !requestBegun(socket))
    ) {
      socket.destroy();
      return;
    }
    const reason =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'request headers too large'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'request not received in time'
          : 'malformed HTTP request';
    socket.end(rawErrorResponse(baseUrl, AppError.invalid([{ field: 'request', reason }])));
  };
}

/** The last request on each connection and its response, for `clientErrorHandler`. */
const lastExchange = new WeakMap<Socket, { request: IncomingMessage; response: ServerResponse }>();
/** Bytes a connection had sent when its last response finished: any more begin a new request. */
const bytesReadWhenIdle = new WeakMap<Socket, number>();

function trackLastExchange(server: Server): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    lastExchange.set(socket, { request, response });
    response.once('finish', () => bytesReadWhenIdle.set(socket, socket.bytesRead));
  });
}

/** Whether the client has sent any byte since the connection opened or its last response. */
function requestBegun(socket: Socket): boolean {
  return socket.bytesRead > (bytesReadWhenIdle.get(socket) ?? 0);
}

/**
 * A route may answer before reading the body (a refused content type, say); if that body then
 * fails to parse, the error belongs to a request already answered, and a second response on the
 * connection would be one the client never asked for. The connection is closed instead.
 */
function answeredBeforeItsBody(socket: Socket): boolean {
  const last = lastExchange.get(socket);
  return last !== undefined && !last.request.complete && last.response.headersSent;
}

/** Node hands CONNECT requests to a separate event; no route here serves them. */
export function refuseConnectMethod(server: Server, baseUrl: string): void {
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.end(
      rawErrorResponse(baseUrl, new AppError('not_found', { message: 'CONNECT is not served here' })),
    );
  });
}
