import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type AuthorizationKind = 'jwt' | 'token' | 'basic' | 'none';

/** One request as the stand-in saw it; tests read these to check what was sent, and how. */
export interface RecordedRequest {
  method: string;
  /** Path and query exactly as requested: a token that leaked into a URL shows here. */
  path: string;
  authorization: AuthorizationKind;
  /** Set when the body was compressed (git gzips large upload-pack requests). */
  contentEncoding?: string;
  /** Filled in when the response has been sent. */
  status?: number;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

export const API_PREFIX = '/api/v3';

export function authorizationKind(header: string | undefined): AuthorizationKind {
  if (!header) return 'none';
  const [scheme = '', credential = ''] = header.trim().split(/\s+/, 2);
  if (/^basic$/i.test(scheme)) return 'basic';
  if (/^bearer$/i.test(scheme) && credential.split('.').length === 3) return 'jwt';
  return 'token';
}

/**
 * One port for both faces, as on GitHub Enterprise Server: the REST API under `/api/v3`, git
 * smart HTTP at the root. The Date header follows the stand-in's clock, because @octokit/auth-app
 * reads it to correct a JWT refused for clock skew.
 */
export async function listen(
  handlers: { api: Handler; git: Handler },
  log: RecordedRequest[],
  now: () => number,
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const entry: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: authorizationKind(req.headers.authorization),
      ...(req.headers['content-encoding'] ? { contentEncoding: req.headers['content-encoding'] } : {}),
    };
    log.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
    });
    res.setHeader('date', new Date(now()).toUTCString());
    const path = entry.path.split('?')[0] ?? '';
    const handler = path === API_PREFIX || path.startsWith(`${API_PREFIX}/`) ? handlers.api : handlers.git;
    handler(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy(error instanceof Error ? error : undefined);
        return;
      }
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`stand-in failure: ${String(error)}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
