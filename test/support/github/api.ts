import type { KeyObject } from 'node:crypto';
import type http from 'node:http';
import type { components } from '@octokit/openapi-types';
import { checkAppJwt, JWT_MESSAGES } from './jwt.js';
import { listTags, readCommit, readFile, readTree, resolveCommit, sizeKb } from './repos.js';
import { API_PREFIX } from './server.js';
import * as shapes from './shapes.js';
import type { Caller, GitHubState, Repo } from './state.js';

export interface ApiContext {
  state: GitHubState;
  urls: shapes.Urls;
  publicKey: KeyObject;
  /** GitHub truncates a tree listing past 100,000 entries; tests lower this to see `truncated: true`. */
  truncateTreesAt: number;
}

const DOCS = {
  root: 'https://docs.github.com/rest',
  createToken: 'https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app',
  getInstallation: 'https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app',
  listInstallationRepos:
    'https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation',
  getRepo: 'https://docs.github.com/rest/repos/repos#get-a-repository',
  listTags: 'https://docs.github.com/rest/repos/repos#list-repository-tags',
  getCommit: 'https://docs.github.com/rest/commits/commits#get-a-commit',
  getTree: 'https://docs.github.com/rest/git/trees#get-a-tree',
  getUser: 'https://docs.github.com/rest/users/users#get-a-user',
  getContent: 'https://docs.github.com/rest/repos/contents#get-repository-content',
} as const;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly documentationUrl: string,
  ) {
    super(message);
  }
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const JWT_ROUTE = /^\/app\/installations\/(\d+)(\/access_tokens)?$/;
const REPO_ROUTE = /^\/(?:repos\/([^/]+)\/([^/]+)|repositories\/(\d+))(\/.*)?$/;
const USER_ROUTE = /^\/users\/([^/]+)$/;
const MAX_BODY_BYTES = 64 * 1024;

/** The REST endpoints the GitHub App rail calls, answered with GitHub's statuses and messages. */
export function createApiHandler(ctx: ApiContext) {
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    let reply: Reply;
    try {
      reply = await route(ctx, req);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      reply = {
        status: error.status,
        body: shapes.errorBody(error.status, error.message, error.documentationUrl),
      };
    }
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  };
}

async function route(ctx: ApiContext, req: http.IncomingMessage): Promise<Reply> {
  const url = new URL(req.url ?? '/', 'http://stand-in');
  const path = url.pathname.slice(API_PREFIX.length);
  const method = req.method ?? '';
  const notFound = new HttpError(404, 'Not Found', DOCS.root);

  if (method === 'GET' && path === '/app') return getApp(ctx, req);
  if (method === 'GET' && path === '/app/installations') return listInstallations(ctx, req, url);
  const app = JWT_ROUTE.exec(path);
  if (app) {
    const id = Number(app[1]);
    if (app[2] && method === 'POST') return createToken(ctx, req, id);
    if (!app[2] && method === 'GET') return getInstallation(ctx, req, id);
    throw notFound;
  }
  if (method !== 'GET') throw notFound;
  const caller = authenticate(ctx, req.headers.authorization);
  if (path === '/installation/repositories') return listInstallationRepos(ctx, caller, url);
  const user = USER_ROUTE.exec(path);
  if (user) return getUser(ctx, decode(user[1]!));
  const repoPath = REPO_ROUTE.exec(path);
  if (!repoPath) throw notFound;
  const sub = repoPath[4] ?? '';
  const find = (docs: string) =>
    findRepo(
      ctx,
      caller,
      docs,
      repoPath[3] ? { id: Number(repoPath[3]) } : { owner: decode(repoPath[1]!), name: decode(repoPath[2]!) },
    );
  if (sub === '') {
    const repo = await find(DOCS.getRepo);
    return { status: 200, body: shapes.fullRepository(repo, ctx.urls, await repoSize(repo)) };
  }
  if (sub === '/tags') return listRepoTags(ctx, await find(DOCS.listTags), url);
  const commit = /^\/commits\/(.+)$/.exec(sub);
  if (commit) return getCommit(ctx, await find(DOCS.getCommit), decode(commit[1]!));
  const contents = /^\/contents\/(.+)$/.exec(sub);
  if (contents)
    return getContent(await find(DOCS.getContent), decode(contents[1]!), url.searchParams.get('ref'));
  const tree = /^\/git\/trees\/(.+)$/.exec(sub);
  if (tree)
    return getTree(ctx, await find(DOCS.getTree), decode(tree[1]!), url.searchParams.has('recursive'));
  throw notFound;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(404, 'Not Found', DOCS.root);
  }
}

function bearerJwt(ctx: ApiContext, header: string | undefined): void {
  const [scheme = '', jwt = ''] = (header ?? '').trim().split(/\s+/, 2);
  const check = /^bearer$/i.test(scheme)
    ? checkAppJwt(jwt, ctx.state.appId, ctx.publicKey, Math.floor(ctx.state.now() / 1000))
    : { ok: false as const, message: JWT_MESSAGES.undecodable };
  if (!check.ok) throw new HttpError(401, check.message, DOCS.root);
}

async function createToken(ctx: ApiContext, req: http.IncomingMessage, id: number): Promise<Reply> {
  ctx.state.tokenRequests++;
  bearerJwt(ctx, req.headers.authorization);
  const body = await readJson(req);
  // Narrowed tokens would need GitHub's `repository` objects in the answer; refuse loudly rather
  // than hand out a token wider than the one asked for.
  for (const field of ['repositories', 'repository_ids', 'permissions']) {
    if (body && typeof body === 'object' && field in body) {
      throw new HttpError(
        422,
        `stand-in: refuses scoped installation tokens (${field}); repo402 asks only for whole-installation tokens`,
        DOCS.createToken,
      );
    }
  }
  const installation = ctx.state.installations.get(id);
  if (!installation) throw new HttpError(404, 'Not Found', DOCS.createToken);
  if (installation.suspendedAt)
    throw new HttpError(403, 'This installation has been suspended', DOCS.createToken);
  return { status: 201, body: shapes.installationToken(ctx.state.issueToken(installation)) };
}

async function getInstallation(ctx: ApiContext, req: http.IncomingMessage, id: number): Promise<Reply> {
  bearerJwt(ctx, req.headers.authorization);
  const installation = ctx.state.installations.get(id);
  if (!installation) throw new HttpError(404, 'Not Found', DOCS.getInstallation);
  const body: components['schemas']['installation'] = shapes.installation(
    installation,
    ctx.urls,
    ctx.state.appId,
  );
  return { status: 200, body };
}

function getApp(ctx: ApiContext, req: http.IncomingMessage): Reply {
  bearerJwt(ctx, req.headers.authorization);
  const { state } = ctx;
  return {
    status: 200,
    body: shapes.app(state.appId, state.appOwner, state.appCreatedAt, ctx.urls, state.installations.size),
  };
}

/** Every installation of the App, suspended ones included, oldest first. */
function listInstallations(ctx: ApiContext, req: http.IncomingMessage, url: URL): Reply {
  bearerJwt(ctx, req.headers.authorization);
  const all = [...ctx.state.installations.values()].sort((a, b) => a.id - b.id);
  const { page, headers } = paged(all, url, `${ctx.urls.api}/app/installations`);
  const body: components['schemas']['installation'][] = page.map((installation) =>
    shapes.installation(installation, ctx.urls, ctx.state.appId),
  );
  return { status: 200, body, ...(headers ? { headers } : {}) };
}

/** The repositories of the token's installation, by id; only an installation token may ask. */
async function listInstallationRepos(ctx: ApiContext, caller: Caller, url: URL): Promise<Reply> {
  if (caller.kind !== 'installation') {
    throw new HttpError(401, 'Requires authentication', DOCS.listInstallationRepos);
  }
  const installation = ctx.state.installation(caller.token.installationId);
  const repos = [...installation.repoIds]
    .sort((a, b) => a - b)
    .map((id) => ctx.state.repos.get(id))
    .filter((repo) => repo !== undefined);
  const { page, headers } = paged(repos, url, `${ctx.urls.api}/installation/repositories`);
  const listed = await Promise.all(
    page.map(async (repo) => shapes.repository(repo, ctx.urls, await repoSize(repo))),
  );
  return {
    status: 200,
    body: shapes.installationRepositories(listed, repos.length),
    ...(headers ? { headers } : {}),
  };
}

/** `token X` and `Bearer X` carry an installation token; the API also takes it as a Basic password. */
function authenticate(ctx: ApiContext, header: string | undefined): Caller {
  let token: string | undefined;
  if (header) {
    const [scheme = '', credential = ''] = header.trim().split(/\s+/, 2);
    token = /^basic$/i.test(scheme)
      ? Buffer.from(credential, 'base64').toString('utf8').split(':').slice(1).join(':')
      : credential;
  }
  const auth = ctx.state.authenticate(token);
  if (auth.kind === 'bad-credentials') throw new HttpError(401, 'Bad credentials', DOCS.root);
  if (auth.kind === 'suspended') throw new HttpError(403, 'This installation has been suspended', DOCS.root);
  return auth;
}

/** A repository the caller may not see answers exactly as one that does not exist: 404, never 403. */
async function findRepo(
  ctx: ApiContext,
  caller: Caller,
  documentationUrl: string,
  key: { id: number } | { owner: string; name: string },
): Promise<Repo> {
  const repo = 'id' in key ? ctx.state.repos.get(key.id) : ctx.state.repoByName(key.owner, key.name);
  if (!repo || !ctx.state.canRead(caller, repo)) throw new HttpError(404, 'Not Found', documentationUrl);
  return repo;
}

function repoSize(repo: Repo): Promise<number> {
  return repo.meta.size === undefined ? sizeKb(repo.gitDir) : Promise.resolve(repo.meta.size);
}

/**
 * One page of a list, as GitHub pages one: `per_page` (default 30, at most 100) and `page`, with a
 * Link header (`prev`, `next`, `last`, `first`) whose URLs start at `linkBase` and keep the
 * request's other query parameters.
 */
function paged<T>(items: T[], url: URL, linkBase: string): { page: T[]; headers?: Record<string, string> } {
  const perPage = Math.min(
    Math.max(Number.parseInt(url.searchParams.get('per_page') ?? '', 10) || 30, 1),
    100,
  );
  const page = Math.max(Number.parseInt(url.searchParams.get('page') ?? '', 10) || 1, 1);
  const last = Math.max(Math.ceil(items.length / perPage), 1);
  const link = (n: number, rel: string) => {
    const query = new URLSearchParams(url.searchParams);
    query.set('page', String(n));
    return `<${linkBase}?${query}>; rel="${rel}"`;
  };
  const links = [
    ...(page > 1 ? [link(page - 1, 'prev')] : []),
    ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []),
    ...(page > 1 ? [link(1, 'first')] : []),
  ];
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    ...(links.length ? { headers: { link: links.join(', ') } } : {}),
  };
}

/**
 * Tags by name, descending; the Link header's URLs use the `/repositories/{id}` form, as GitHub's
 * do, so a client that follows them must be able to reach that path too.
 */
async function listRepoTags(ctx: ApiContext, repo: Repo, url: URL): Promise<Reply> {
  const { page, headers } = paged(
    await listTags(repo.gitDir),
    url,
    `${ctx.urls.api}/repositories/${repo.id}/tags`,
  );
  return {
    status: 200,
    body: page.map((t) => shapes.tag(repo, ctx.urls, t.name, t.commit)),
    ...(headers ? { headers } : {}),
  };
}

async function getCommit(ctx: ApiContext, repo: Repo, ref: string): Promise<Reply> {
  const sha = await resolveCommit(repo.gitDir, ref);
  if (!sha) throw new HttpError(422, `No commit found for SHA: ${ref}`, DOCS.getCommit);
  const info = await readCommit(repo.gitDir, sha);
  return { status: 200, body: shapes.commit(repo, ctx.urls, info, [...ctx.state.accounts.values()]) };
}

async function getTree(ctx: ApiContext, repo: Repo, treeish: string, recursive: boolean): Promise<Reply> {
  const tree = await readTree(repo.gitDir, treeish, recursive);
  if (!tree) throw new HttpError(404, 'Not Found', DOCS.getTree);
  const truncated = tree.entries.length > ctx.truncateTreesAt;
  const entries = truncated ? tree.entries.slice(0, ctx.truncateTreesAt) : tree.entries;
  return { status: 200, body: shapes.gitTree(repo, ctx.urls, tree.sha, entries, truncated) };
}

/** A file's content object (GitHub's default JSON answer, base64 content) on the default branch or `ref`. */
async function getContent(repo: Repo, filePath: string, ref: string | null): Promise<Reply> {
  const file = await readFile(repo.gitDir, ref ?? repo.meta.default_branch, filePath);
  if (!file) throw new HttpError(404, 'Not Found', DOCS.getContent);
  return {
    status: 200,
    body: {
      type: 'file',
      encoding: 'base64',
      size: file.content.length,
      name: filePath.split('/').at(-1)!,
      path: filePath,
      sha: file.sha,
      content: file.content.toString('base64'),
    },
  };
}

function getUser(ctx: ApiContext, login: string): Reply {
  const account = ctx.state.findAccount(login);
  if (!account) throw new HttpError(404, 'Not Found', DOCS.getUser);
  let publicRepos = 0;
  for (const repo of ctx.state.repos.values()) if (repo.owner === account && !repo.private) publicRepos++;
  return { status: 200, body: shapes.publicUser(account, ctx.urls, publicRepos) };
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'Payload too large', DOCS.root);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'Problems parsing JSON', DOCS.root);
  }
}
