import { App } from '@octokit/app';
import { Octokit } from '@octokit/rest';
import type { FastifyBaseLogger } from 'fastify';
import type { GitHubAppConfig } from '../config.js';
import { type AccessLoss, lossReason } from './access.js';

/**
 * The GitHub App, as the rail uses it: installation tokens (cached by `@octokit/auth-app` in
 * memory, never written anywhere) and the few REST reads a listing needs. Every call names the
 * installation, so one creator's installation never reads another's repositories.
 *
 * A call the installation can no longer make (uninstalled, suspended, token refused) throws
 * `GitHubAccessError`; a repository or ref it cannot see is `undefined`, as GitHub answers 404 for
 * both "missing" and "not yours".
 */

/** SPEC.md `computed.repo_meta`, as GitHub describes the repository. */
export interface RepoMeta {
  repo_id: number;
  name: string;
  full_name: string;
  description: string | null;
  homepage: string | null;
  topics: string[];
  language: string | null;
  default_branch: string;
  size_kb: number;
  created_at: string | null;
  pushed_at: string | null;
  licence_spdx: string | null;
  open_issues: number;
  stars: number;
  forks: number;
  watchers: number;
  archived: boolean;
  private: boolean;
  html_url: string;
}

/** SPEC.md `computed.owner`, as GitHub describes the account that owns the repository. */
export interface OwnerMeta {
  login: string;
  name: string | null;
  avatar_url: string | null;
  bio: string | null;
  blog: string | null;
  company: string | null;
  location: string | null;
  twitter_username: string | null;
  followers: number | null;
  public_repos: number | null;
  created_at: string | null;
  html_url: string | null;
}

export interface GitHubRepo {
  id: number;
  fullName: string;
  ownerLogin: string;
  private: boolean;
  cloneUrl: string;
  meta: RepoMeta;
}

export interface TreeSize {
  files: number;
  bytes: number;
  /** Deepest path, in directories (`a/b/c.txt` is 2). */
  depth: number;
  /** GitHub stopped listing: the tree is larger than any limit of ours. */
  truncated: boolean;
}

export type RepoRef = { id: number } | { fullName: string };

/** The App as GitHub describes it (`GET /app`). */
export interface GitHubAppInfo {
  /** Its public page, `https://github.com/apps/<slug>`, where accounts install it. */
  htmlUrl: string;
}

/** One installation of the App, as the App's installation list shows it. */
export interface GitHubInstallation {
  id: number;
  /** The login of the account (or the slug of the enterprise) it is installed on. */
  account: string | null;
  suspended: boolean;
}

/** A repository as an installation's repository list shows it. */
export interface InstallationRepo {
  id: number;
  fullName: string;
  ownerLogin: string;
  private: boolean;
  defaultBranch: string;
  pushedAt: string | null;
}

/** The first `limit` entries of a GitHub list, and whether it holds more. */
export interface ListHead<T> {
  items: T[];
  more: boolean;
}

/** The installation cannot make the call at all: access to the source is gone. */
export class GitHubAccessError extends Error {
  constructor(
    readonly installationId: number,
    readonly status: number,
    readonly loss: AccessLoss,
  ) {
    super(lossReason(loss));
    this.name = 'GitHubAccessError';
  }
}

/** GitHub answered a call with an error that is not the installation's access being gone. */
export class GitHubRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'GitHubRefusal';
  }
}

/** GitHub's largest page: the fewest requests for a list. */
const PAGE_SIZE = 100;

/** A fresh token is taken when the cached one has less than this left: a fetch must not outlive it. */
const TOKEN_MIN_LIFETIME_MS = 10 * 60 * 1000;

export class GitHubClient {
  private readonly app: App;

  constructor(
    readonly config: GitHubAppConfig,
    private readonly log: FastifyBaseLogger,
  ) {
    // Every Octokit made here (the App's, each installation's) logs through `octokitLog`.
    const octokitLogger = octokitLog(log);
    this.app = new App({
      appId: config.appId,
      privateKey: config.privateKey,
      log: octokitLogger,
      Octokit: Octokit.defaults({ baseUrl: config.apiUrl, userAgent: 'repo402', log: octokitLogger }),
    });
  }

  /** The installation's token, for git over HTTPS; never log it or put it in a URL or argv. */
  async token(installationId: number): Promise<string> {
    return this.call(installationId, async () => {
      const auth = (refresh: boolean) =>
        this.app.octokit.auth({ type: 'installation', installationId, refresh }) as Promise<{
          token: string;
          expiresAt: string;
        }>;
      const cached = await auth(false);
      if (Date.parse(cached.expiresAt) - Date.now() > TOKEN_MIN_LIFETIME_MS) return cached.token;
      return (await auth(true)).token;
    });
  }

  async repo(installationId: number, ref: RepoRef): Promise<GitHubRepo | undefined> {
    const data = await this.read(installationId, (octokit) =>
      'id' in ref
        ? octokit.request('GET /repositories/{repository_id}', { repository_id: ref.id })
        : octokit.rest.repos.get(ownerAndRepo(ref.fullName)),
    );
    if (!data) return undefined;
    return {
      id: data.id,
      fullName: data.full_name,
      ownerLogin: data.owner.login,
      private: data.private,
      cloneUrl: data.clone_url,
      meta: {
        repo_id: data.id,
        name: data.name,
        full_name: data.full_name,
        description: data.description ?? null,
        homepage: data.homepage ?? null,
        topics: data.topics ?? [],
        language: data.language ?? null,
        default_branch: data.default_branch,
        size_kb: data.size,
        created_at: data.created_at ?? null,
        pushed_at: data.pushed_at ?? null,
        licence_spdx: data.license?.spdx_id ?? null,
        open_issues: data.open_issues_count,
        stars: data.stargazers_count,
        forks: data.forks_count,
        watchers: data.subscribers_count ?? data.watchers_count,
        archived: data.archived,
        private: data.private,
        html_url: data.html_url,
      },
    };
  }

  /** Every tag of the repository with the commit it points at (annotated tags peeled). */
  async tags(installationId: number, repo: GitHubRepo): Promise<Array<{ name: string; commit: string }>> {
    const octokit = await this.installationOctokit(installationId);
    const tags = await this.call(installationId, () =>
      octokit.paginate('GET /repos/{owner}/{repo}/tags', { ...ownerAndRepo(repo.fullName), per_page: 100 }),
    );
    return tags.map((tag) => ({ name: tag.name, commit: tag.commit.sha }));
  }

  /** The commit a branch, tag or SHA names, with its tree; undefined when it names none. */
  async commit(
    installationId: number,
    repo: GitHubRepo,
    ref: string,
  ): Promise<{ sha: string; treeSha: string } | undefined> {
    const data = await this.read(installationId, (octokit) =>
      octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', { ...ownerAndRepo(repo.fullName), ref }),
    );
    return data ? { sha: data.sha, treeSha: data.commit.tree.sha } : undefined;
  }

  /** Files, bytes and depth of a tree, read from GitHub before anything is fetched. */
  async treeSize(installationId: number, repo: GitHubRepo, treeSha: string): Promise<TreeSize> {
    const data = await this.read(installationId, (octokit) =>
      octokit.rest.git.getTree({ ...ownerAndRepo(repo.fullName), tree_sha: treeSha, recursive: 'true' }),
    );
    if (!data) throw new Error(`GitHub has no tree ${treeSha} in ${repo.fullName}`);
    let files = 0;
    let bytes = 0;
    let depth = 0;
    for (const entry of data.tree) {
      depth = Math.max(depth, (entry.path ?? '').split('/').length - 1);
      if (entry.type !== 'blob') continue;
      files++;
      bytes += entry.size ?? 0;
    }
    return { files, bytes, depth, truncated: data.truncated };
  }

  /** A file's text on the default branch; undefined when there is no such file. */
  async fileText(
    installationId: number,
    repo: Pick<GitHubRepo, 'fullName'>,
    filePath: string,
  ): Promise<string | undefined> {
    const data = await this.read(installationId, (octokit) =>
      octokit.rest.repos.getContent({ ...ownerAndRepo(repo.fullName), path: filePath }),
    );
    if (!data || Array.isArray(data) || data.type !== 'file' || !('content' in data)) return undefined;
    return Buffer.from(data.content, 'base64').toString('utf8');
  }

  /** The App itself, asked with the App's JWT. */
  async appInfo(): Promise<GitHubAppInfo> {
    const { data } = await this.appCall(() => this.appOctokit().request('GET /app'));
    if (!data) throw new GitHubRefusal(200, 'GitHub answered GET /app without an App');
    return { htmlUrl: data.html_url };
  }

  /**
   * The App's installations in GitHub's order, at most `limit` of them: every account the App is
   * installed on, whoever installed it, so what is shown of them is the caller's to decide.
   */
  async installations(limit: number): Promise<ListHead<GitHubInstallation>> {
    const head = await this.appCall(() =>
      firstItems(
        this.appOctokit().paginate.iterator('GET /app/installations', { per_page: PAGE_SIZE }),
        limit,
      ),
    );
    return {
      more: head.more,
      items: head.items.map((installation) => ({
        id: installation.id,
        account: accountName(installation.account),
        suspended: installation.suspended_at != null,
      })),
    };
  }

  /** The repositories the installation was given, in GitHub's order, at most `limit` of them. */
  async installationRepositories(installationId: number, limit: number): Promise<ListHead<InstallationRepo>> {
    const octokit = await this.installationOctokit(installationId);
    const head = await this.call(installationId, () =>
      firstItems(octokit.paginate.iterator('GET /installation/repositories', { per_page: PAGE_SIZE }), limit),
    );
    return {
      more: head.more,
      items: head.items.map((repo) => ({
        id: repo.id,
        fullName: repo.full_name,
        ownerLogin: repo.owner.login,
        private: repo.private,
        defaultBranch: repo.default_branch,
        pushedAt: repo.pushed_at ?? null,
      })),
    };
  }

  /** The owning account's public profile; fields GitHub leaves out are null. */
  async owner(installationId: number, login: string): Promise<OwnerMeta | undefined> {
    const data = await this.read(installationId, (octokit) =>
      octokit.rest.users.getByUsername({ username: login }),
    );
    if (!data) return undefined;
    // A user and an organisation answer the same fields; GitHub leaves some out of either.
    const profile = data as Partial<Record<keyof OwnerMeta, unknown>>;
    const field = <K extends keyof OwnerMeta>(key: K) => (profile[key] ?? null) as OwnerMeta[K];
    return {
      login: data.login,
      name: field('name'),
      avatar_url: field('avatar_url'),
      bio: field('bio'),
      blog: field('blog'),
      company: field('company'),
      location: field('location'),
      twitter_username: field('twitter_username'),
      followers: field('followers'),
      public_repos: field('public_repos'),
      created_at: field('created_at'),
      html_url: field('html_url'),
    };
  }

  /** A read through the installation: its data, or undefined when GitHub answers 404 or 422. */
  private async read<T>(
    installationId: number,
    request: (octokit: Octokit) => Promise<{ data: T }>,
  ): Promise<T | undefined> {
    const octokit = await this.installationOctokit(installationId);
    return this.call(installationId, async () => {
      try {
        return (await request(octokit)).data;
      } catch (error) {
        const status = statusOf(error);
        if (status === 404 || status === 422) return undefined;
        throw error;
      }
    });
  }

  /** The Octokit acting as the App (its JWT): built from the class given to `App`, so it paginates. */
  private appOctokit(): Octokit {
    return this.app.octokit as unknown as Octokit;
  }

  /**
   * An Octokit acting as the installation. Its token is taken first, on its own: octokit takes it
   * lazily on the first request, where a 404 for an uninstalled App would read as a missing repo.
   */
  private async installationOctokit(installationId: number): Promise<Octokit> {
    await this.token(installationId);
    return this.call(
      installationId,
      async () => (await this.app.getInstallationOctokit(installationId)) as unknown as Octokit,
    );
  }

  /**
   * Runs a call for an installation; a refusal of the installation itself becomes
   * `GitHubAccessError`.
   */
  private call<T>(installationId: number, run: () => Promise<T>): Promise<T> {
    return this.refusalsNamed(
      run,
      { installationId },
      'GitHub refused a call of the installation',
      (status) =>
        status === 401 || status === 403 || status === 404
          ? new GitHubAccessError(installationId, status, accessLoss(status))
          : undefined,
    );
  }

  /** Runs a call made as the App itself (its JWT): any refusal is a `GitHubRefusal`. */
  private appCall<T>(run: () => Promise<T>): Promise<T> {
    return this.refusalsNamed(run, {}, 'GitHub refused a call of the App', () => undefined);
  }

  /**
   * Turns GitHub's answer to a failed call into an error of ours, logged. Only the status and
   * GitHub's message are logged: octokit errors carry the request, and the request carries
   * credentials.
   */
  private async refusalsNamed<T>(
    run: () => Promise<T>,
    fields: Record<string, unknown>,
    line: string,
    accessError: (status: number) => GitHubAccessError | undefined,
  ): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const status = statusOf(error);
      if (status === undefined) throw error;
      const message = error instanceof Error ? error.message.slice(0, 300) : 'request failed';
      this.log.warn({ ...fields, status, github: message }, line);
      throw accessError(status) ?? new GitHubRefusal(status, `GitHub answered ${status}: ${message}`);
    }
  }
}

/**
 * Reads a paginated list page by page until it holds more than `limit` entries or ends: pages past
 * the one that answers the question are never asked for.
 */
async function firstItems<T>(pages: AsyncIterable<{ data: T[] }>, limit: number): Promise<ListHead<T>> {
  const items: T[] = [];
  for await (const page of pages) {
    items.push(...page.data);
    if (items.length > limit) break;
  }
  return { items: items.slice(0, limit), more: items.length > limit };
}

/** An installation's account: a user or an organisation by login, an enterprise by slug. */
function accountName(account: { login?: string; slug?: string } | null): string | null {
  return account?.login ?? account?.slug ?? null;
}

/** Octokit's request line: `GET /repositories/1 - 404 with id ABCD:1234 in 12ms`. */
const REQUEST_LINE = /^([A-Z]+) (\S+) - (\d{3}|undefined) with id (\S+) in (\d+)ms$/;

/** Anything shaped like a GitHub token or a JWT, wherever it appears in a line. */
const TOKEN_SHAPES = [
  /\bgh[opsur]_[A-Za-z0-9_]{16,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{16,}/g,
  /\bv1\.[0-9a-f]{40}\b/g,
  /\beyJ[\w-]+\.[\w-]+\.[\w-]+/g,
  /((?:access_)?token=)[^&\s]+/gi,
];

/** A line of octokit's with every token-shaped part masked. */
export function maskTokens(text: string): string {
  return TOKEN_SHAPES.reduce(
    (masked, shape) =>
      masked.replace(shape, (_match, prefix?: unknown) =>
        typeof prefix === 'string' ? `${prefix}***` : '***',
      ),
    text,
  );
}

/**
 * The `log` octokit and its plugins write to (one line per request, auth-app's retries), as
 * structured lines in the service's log, marked `source: "octokit"`. Only the message is kept:
 * octokit passes a request's options along with its debug lines, and those carry credentials
 * (such a line, `request`, is left out: without its options it says nothing).
 * Request lines are parsed into `method`, `path`, `status`, `github_request_id` and `ms`. A request
 * line is `debug` (one per call) and a failed one `info`: `GitHubClient` itself logs every refusal
 * that matters, as a warning, and answers 404s it expects (a ref that does not exist) as nothing.
 */
function octokitLog(log: FastifyBaseLogger) {
  const line =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: unknown): void => {
      // request-log's `debug("request", options)`: without its options it says nothing.
      if (message === 'request') return;
      const text = maskTokens(typeof message === 'string' ? message : String(message));
      const request = REQUEST_LINE.exec(text);
      if (!request) {
        log[level]({ source: 'octokit' }, text);
        return;
      }
      const [, method, path, status, requestId, ms] = request;
      log[level === 'error' ? 'info' : 'debug'](
        {
          source: 'octokit',
          method,
          path,
          status: status === 'undefined' ? null : Number(status),
          github_request_id: requestId,
          ms: Number(ms),
        },
        text,
      );
    };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** `owner/name` as the REST API's path parameters. */
function ownerAndRepo(fullName: string): { owner: string; repo: string } {
  const [owner = '', repo = ''] = fullName.split('/');
  return { owner, repo };
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

function accessLoss(status: number): AccessLoss {
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_installed';
  return 'refused';
}
