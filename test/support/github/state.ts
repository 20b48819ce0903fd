import { randomInt } from 'node:crypto';
import type { components } from '@octokit/openapi-types';

type PublicUser = components['schemas']['public-user'];
type FullRepository = components['schemas']['full-repository'];

export type AccountType = 'User' | 'Organization';

/** Profile fields a test may set, named as `GET /users/{login}` answers them. */
export type Profile = Partial<
  Pick<
    PublicUser,
    | 'name'
    | 'company'
    | 'blog'
    | 'location'
    | 'email'
    | 'hireable'
    | 'bio'
    | 'twitter_username'
    | 'public_repos'
    | 'public_gists'
    | 'followers'
    | 'following'
    | 'created_at'
    | 'updated_at'
  >
>;

export interface Account {
  login: string;
  id: number;
  type: AccountType;
  profile: Profile;
  createdAt: string;
}

/**
 * Repository fields a test may set, named as `GET /repos/{owner}/{repo}` answers them. `license`
 * is an SPDX id (`null`: none detected); `size` left unset is measured from the bare repository.
 */
export type RepoMetadata = Partial<
  Pick<
    FullRepository,
    | 'description'
    | 'homepage'
    | 'topics'
    | 'language'
    | 'default_branch'
    | 'size'
    | 'archived'
    | 'disabled'
    | 'is_template'
    | 'stargazers_count'
    | 'forks_count'
    | 'watchers_count'
    | 'subscribers_count'
    | 'network_count'
    | 'open_issues_count'
    | 'has_issues'
    | 'has_projects'
    | 'has_wiki'
    | 'has_pages'
    | 'has_downloads'
    | 'has_discussions'
    | 'created_at'
    | 'updated_at'
    | 'pushed_at'
  >
> & { license?: string | null };

export interface Repo {
  id: number;
  owner: Account;
  name: string;
  private: boolean;
  gitDir: string;
  workDir: string;
  meta: RepoMetadata &
    Required<Pick<RepoMetadata, 'default_branch' | 'created_at' | 'updated_at' | 'pushed_at'>>;
}

export interface Installation {
  id: number;
  account: Account;
  /** The installation's repository selection (GitHub's "Only select repositories"). */
  repoIds: Set<number>;
  createdAt: string;
  updatedAt: string;
  suspendedAt: string | null;
}

/** What an installation token grants: GitHub's `contents: read` App, the only one this rail needs. */
export const GRANTED_PERMISSIONS: components['schemas']['app-permissions'] = {
  contents: 'read',
  metadata: 'read',
};

export interface IssuedToken {
  token: string;
  installationId: number;
  expiresAt: number;
}

export type Caller = { kind: 'anonymous' } | { kind: 'installation'; token: IssuedToken };

/** GitHub's answer to a credential: a caller, or why the request is refused before any lookup. */
export type Authentication = Caller | { kind: 'bad-credentials' } | { kind: 'suspended' };

const TOKEN_LIFETIME_MS = 60 * 60 * 1000;

/** The stand-in App's slug: its page is `<web>/apps/<slug>`. */
export const APP_SLUG = 'repo402-stand-in';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The stand-in's GitHub: accounts, repositories, one App's installations and the tokens it was
 * issued. Ids come from separate ranges so a test that passes a repository id where an
 * installation id belongs gets a 404, not someone else's object.
 */
export class GitHubState {
  readonly accounts = new Map<string, Account>();
  readonly repos = new Map<number, Repo>();
  readonly installations = new Map<number, Installation>();
  readonly tokens = new Map<string, IssuedToken>();
  readonly tokensIssued: string[] = [];
  tokenRequests = 0;
  /** The account that registered the App (an organisation); not one the App is installed on. */
  readonly appOwner: Account;
  readonly appCreatedAt: string;
  private nextAccountId = 1001;
  private nextRepoId = 700_000_001;
  private nextInstallationId = 40_000_001;

  constructor(
    readonly appId: number,
    readonly now: () => number,
  ) {
    this.appCreatedAt = this.isoNow();
    // Below the ids `account()` hands out, and outside `accounts`: no test meets it but as the owner.
    this.appOwner = {
      login: 'repo402-operator',
      id: 1000,
      type: 'Organization',
      profile: {},
      createdAt: this.appCreatedAt,
    };
  }

  isoNow(): string {
    return iso(this.now());
  }

  /**
   * Now, or a second after `previous` when now is not later: GitHub's timestamps have a resolution
   * of a second, and two changes of one installation (each a person's action on github.com) are
   * never within one, so their payloads always differ; a test that makes them faster still gets
   * payloads that do.
   */
  isoAfter(previous: string): string {
    return iso(Math.max(this.now(), Date.parse(previous) + 1000));
  }

  account(login: string, type?: AccountType): Account {
    const existing = this.accounts.get(login.toLowerCase());
    if (existing) {
      if (type) existing.type = type;
      return existing;
    }
    const account: Account = {
      login,
      id: this.nextAccountId++,
      type: type ?? 'User',
      profile: {},
      createdAt: this.isoNow(),
    };
    this.accounts.set(login.toLowerCase(), account);
    return account;
  }

  findAccount(login: string): Account | undefined {
    return this.accounts.get(login.toLowerCase());
  }

  newRepoId(): number {
    return this.nextRepoId++;
  }

  /** GitHub resolves owner and name case-insensitively. */
  repoByName(owner: string, name: string): Repo | undefined {
    const fullName = `${owner}/${name}`.toLowerCase();
    for (const repo of this.repos.values()) {
      if (`${repo.owner.login}/${repo.name}`.toLowerCase() === fullName) return repo;
    }
    return undefined;
  }

  createInstallation(account: Account): Installation {
    const installation: Installation = {
      id: this.nextInstallationId++,
      account,
      repoIds: new Set(),
      createdAt: this.isoNow(),
      updatedAt: this.isoNow(),
      suspendedAt: null,
    };
    this.installations.set(installation.id, installation);
    return installation;
  }

  installation(id: number): Installation {
    const installation = this.installations.get(id);
    if (!installation) throw new Error(`no installation ${id}`);
    return installation;
  }

  /** An App can be installed once per account, and an installation holds only that account's repos. */
  installationOf(repo: Repo): Installation | undefined {
    for (const installation of this.installations.values()) {
      if (installation.repoIds.has(repo.id)) return installation;
    }
    return undefined;
  }

  /** Uninstalling revokes every token the installation was issued. */
  deleteInstallation(id: number): void {
    this.installations.delete(id);
    for (const [token, issued] of this.tokens) {
      if (issued.installationId === id) this.tokens.delete(token);
    }
  }

  issueToken(installation: Installation): IssuedToken {
    let token = 'ghs_';
    for (let i = 0; i < 36; i++) token += ALNUM[randomInt(ALNUM.length)];
    const issued: IssuedToken = {
      token,
      installationId: installation.id,
      expiresAt: this.now() + TOKEN_LIFETIME_MS,
    };
    this.tokens.set(token, issued);
    this.tokensIssued.push(token);
    return issued;
  }

  authenticate(token: string | undefined): Authentication {
    if (token === undefined) return { kind: 'anonymous' };
    const issued = this.tokens.get(token);
    if (!issued || issued.expiresAt <= this.now()) return { kind: 'bad-credentials' };
    if (this.installations.get(issued.installationId)?.suspendedAt) return { kind: 'suspended' };
    return { kind: 'installation', token: issued };
  }

  /**
   * GitHub's visibility rule: anyone may read a public repository (installation tokens included);
   * a private one only a token of the installation that has it selected. Access follows the
   * selection as it is now, not as it was when the token was issued.
   */
  canRead(caller: Caller, repo: Repo): boolean {
    if (!repo.private) return true;
    if (caller.kind !== 'installation') return false;
    return this.installations.get(caller.token.installationId)?.repoIds.has(repo.id) === true;
  }
}

/** GitHub's timestamps: ISO 8601 in UTC, without milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
