/**
 * Errors as the API answers them: `AppError`, which every route throws, and the error body. The
 * codes and their texts are the catalogue's (error-catalogue.ts), re-exported here for the server.
 */
export {
  ERROR_CODES,
  ERRORS,
  type ErrorCode,
  type ErrorGroup,
  type ErrorSpec,
  VERSIONS_SOLD,
} from './error-catalogue.js';

import { ERRORS, type ErrorCode } from './error-catalogue.js';

export interface Issue {
  field: string;
  reason: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  docs_url: string;
  details?: Record<string, unknown>;
  retry_after_seconds?: number;
}

export interface AppErrorOptions {
  message?: string;
  details?: Record<string, unknown>;
  /** Only for `rate_limited`. */
  retryAfterSeconds?: number;
  /** Extra response headers, for example `retry-after` or `PAYMENT-REQUIRED`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A failure the caller should see as the spec's error body. Throw it from any layer. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    // An AppError is an expected outcome (a 404, a 402, a 429), not a bug: skip the stack capture,
    // which dominates the cost of these hot paths. A wrapped fault keeps its own stack in `cause`.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options.message ?? ERRORS[code].meaning, { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
    // SPEC: every 429 carries `retry-after` as well as the body's retry_after_seconds.
    if (code === 'rate_limited') {
      this.headers['retry-after'] ??= String(options.retryAfterSeconds ?? 1);
    }
  }

  /** `400 invalid_request` naming each offending field. */
  static invalid(issues: Issue[], message = 'The request did not validate'): AppError {
    return new AppError('invalid_request', { message, details: { issues } });
  }
}

/** Message parts joined as sentences: a part that does not end a sentence gets its full stop. */
export function sentences(...parts: string[]): string {
  return parts.map((part) => (/[.!?]$/.test(part) ? part : `${part}.`)).join(' ');
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

export function docsUrl(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/docs/errors#${code}`;
}

export function errorBody(baseUrl: string, error: AppError): ErrorBody {
  const body: ErrorBody = {
    code: error.code,
    message: error.message,
    docs_url: docsUrl(baseUrl, error.code),
  };
  if (error.details !== undefined) body.details = error.details;
  if (error.code === 'rate_limited') body.retry_after_seconds = error.retryAfterSeconds ?? 1;
  return body;
}
