import { spawn } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GIT_ENV } from './git.js';
import type { GitHubState } from './state.js';

const GIT_ROUTE = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
/** `version=2`, possibly with more `key=value` pairs separated by colons. */
const GIT_PROTOCOL = /^[A-Za-z0-9=:._-]{1,256}$/;
const BACKEND_TIMEOUT_MS = 60_000;

/**
 * Read-only git smart HTTP: `git http-backend` as a CGI per request, behind GitHub's rules:
 * installation tokens as Basic passwords with the user `x-access-token`, anonymous reads of public
 * repositories only, no pushes, no dumb protocol.
 */
export function createGitHandler(state: GitHubState) {
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const match = GIT_ROUTE.exec(url.pathname);
    const service = match?.[3] === 'info/refs' ? url.searchParams.get('service') : match?.[3];
    const allowed =
      (service === 'git-upload-pack' || service === 'git-receive-pack') &&
      req.method === (match?.[3] === 'info/refs' ? 'GET' : 'POST');
    if (!match || !allowed) return text(res, 404, 'Not Found');

    const auth = authenticate(state, req.headers.authorization);
    if (auth.kind === 'bad-credentials') return askForCredentials(res);
    if (auth.kind === 'suspended') return text(res, 403, 'This installation has been suspended');
    const repo = state.repoByName(decode(match[1]!), decode(match[2]!));
    if (!repo || !state.canRead(auth, repo)) {
      // Anonymous callers are asked to log in, so they cannot tell a private repository from none.
      return auth.kind === 'anonymous' ? askForCredentials(res) : text(res, 404, 'Repository not found.');
    }
    if (service === 'git-receive-pack') return text(res, 403, 'Write access to repository not granted.');

    const protocol = req.headers['git-protocol'];
    const encoding = req.headers['content-encoding'];
    if (encoding && encoding !== 'gzip' && encoding !== 'x-gzip')
      return text(res, 415, 'Unsupported Content-Encoding');
    const backend = spawn('git', ['http-backend'], {
      timeout: BACKEND_TIMEOUT_MS,
      env: {
        ...GIT_ENV,
        GIT_PROJECT_ROOT: path.dirname(repo.gitDir),
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: `/${path.basename(repo.gitDir)}/${match[3]}`,
        REQUEST_METHOD: req.method ?? 'GET',
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: req.socket.remoteAddress ?? '',
        ...(auth.kind === 'installation' ? { REMOTE_USER: 'x-access-token' } : {}),
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        // http-backend inflates a gzip body itself as it reads, so the request streams through.
        ...(encoding ? { HTTP_CONTENT_ENCODING: encoding } : {}),
        ...(typeof protocol === 'string' && GIT_PROTOCOL.test(protocol) ? { GIT_PROTOCOL: protocol } : {}),
      },
    });
    let stderr = '';
    backend.on('error', (error) => {
      stderr += String(error);
    });
    backend.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-8192);
    });
    res.on('close', () => {
      if (backend.exitCode === null) backend.kill();
    });
    const exited = new Promise<number | null>((resolve) => backend.on('close', resolve));
    await Promise.all([
      pipeline(req, backend.stdin).catch(() => {
        // http-backend may answer (an error) without reading the whole body; its answer still counts.
      }),
      pipeline(backend.stdout, new CgiResponse(res, () => stderr), res),
    ]);
    await exited;
  };
}

function authenticate(state: GitHubState, header: string | undefined) {
  if (!header) return state.authenticate(undefined);
  const [scheme = '', credential = ''] = header.trim().split(/\s+/, 2);
  if (!/^basic$/i.test(scheme)) return { kind: 'bad-credentials' } as const;
  const decoded = Buffer.from(credential, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || decoded.slice(0, colon) !== 'x-access-token') return { kind: 'bad-credentials' } as const;
  return state.authenticate(decoded.slice(colon + 1));
}

/** A malformed escape names no repository. */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}

function askForCredentials(res: http.ServerResponse): void {
  res.setHeader('www-authenticate', 'Basic realm="GitHub"');
  text(res, 401, 'Invalid username or token. Password authentication is not supported for Git operations.');
}

function text(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}

const MAX_CGI_HEADER_BYTES = 64 * 1024;

/** Turns the CGI's `Status:` and header lines into the HTTP response head; the rest streams through. */
class CgiResponse extends Transform {
  private head: Buffer | undefined = Buffer.alloc(0);

  constructor(
    private readonly res: http.ServerResponse,
    private readonly stderr: () => string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.head) {
      done(null, chunk);
      return;
    }
    const head = Buffer.concat([this.head, chunk]);
    const crlf = head.indexOf('\r\n\r\n');
    const lf = head.indexOf('\n\n');
    const end =
      crlf >= 0 && (lf < 0 || crlf < lf) ? { at: crlf, skip: 4 } : lf >= 0 ? { at: lf, skip: 2 } : undefined;
    if (!end) {
      this.head = head;
      done(head.length > MAX_CGI_HEADER_BYTES ? new Error('http-backend sent no header end') : null);
      return;
    }
    this.head = undefined;
    let status = 200;
    for (const line of head.subarray(0, end.at).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else if (colon > 0) this.res.setHeader(name, value);
    }
    this.res.statusCode = status;
    done(null, head.subarray(end.at + end.skip));
  }

  override _flush(done: TransformCallback): void {
    if (!this.head) {
      done();
      return;
    }
    this.res.statusCode = 500;
    this.res.setHeader('content-type', 'text/plain; charset=utf-8');
    done(null, `git http-backend failed: ${this.stderr()}\n`);
  }
}
