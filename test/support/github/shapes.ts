import type { components, operations } from '@octokit/openapi-types';
import type { components as webhookComponents } from '@octokit/openapi-webhooks-types';
import spdx from 'spdx-license-list';
import type { CommitInfo, TreeEntry } from './repos.js';
import {
  type Account,
  APP_SLUG,
  GRANTED_PERMISSIONS,
  type Installation,
  type IssuedToken,
  iso,
  type Repo,
} from './state.js';

/**
 * GitHub's REST objects, built from the stand-in's state. Each builder's return type is the schema
 * GitHub publishes (@octokit/openapi-types), so a field GitHub requires cannot go missing or change
 * type without `tsc` failing.
 */
type Rest = components['schemas'];

/** `GET /installation/repositories`: the page of repositories with their count. */
export type InstallationRepositories =
  operations['apps/list-repos-accessible-to-installation']['responses'][200]['content']['application/json'];

/** The stand-in's addresses, GitHub Enterprise Server style: the API under `/api/v3`, the rest at the root. */
export interface Urls {
  api: string;
  web: string;
}

/** GitHub's legacy global node ids: base64 of `0<length of type>:<type><id>`. */
export function nodeId(type: string, id: string | number): string {
  return Buffer.from(`0${type.length}:${type}${id}`).toString('base64');
}

/** The noreply address GitHub gives an account; commits carrying it are linked to the account. */
export function noreplyEmail(account: Account): string {
  return `${account.id}+${account.login}@users.noreply.github.com`;
}

/** Typed as the webhook schema's simple-user (`id: number`), which the REST one (`number | bigint`) accepts too. */
export function simpleUser(account: Account, urls: Urls): webhookComponents['schemas']['simple-user'] {
  const url = `${urls.api}/users/${account.login}`;
  return {
    login: account.login,
    id: account.id,
    node_id: nodeId(account.type, account.id),
    avatar_url: `https://avatars.githubusercontent.com/u/${account.id}?v=4`,
    gravatar_id: '',
    url,
    html_url: `${urls.web}/${account.login}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type: account.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

/** `GET /users/{login}`: organizations answer there too, with `type: "Organization"`. */
export function publicUser(account: Account, urls: Urls, publicRepos: number): Rest['public-user'] {
  const { profile } = account;
  return {
    ...simpleUser(account, urls),
    name: profile.name ?? null,
    company: profile.company ?? null,
    blog: profile.blog ?? '',
    location: profile.location ?? null,
    email: profile.email ?? null,
    hireable: profile.hireable ?? null,
    bio: profile.bio ?? null,
    twitter_username: profile.twitter_username ?? null,
    public_repos: profile.public_repos ?? publicRepos,
    public_gists: profile.public_gists ?? 0,
    followers: profile.followers ?? 0,
    following: profile.following ?? 0,
    created_at: profile.created_at ?? account.createdAt,
    updated_at: profile.updated_at ?? account.createdAt,
  };
}

/** GitHub's licence object for a detected SPDX id; an id GitHub does not know is "other". */
export function license(spdxId: string | null | undefined, urls: Urls): Rest['license-simple'] | null {
  if (!spdxId) return null;
  const known = spdx[spdxId];
  if (!known)
    return { key: 'other', name: 'Other', spdx_id: 'NOASSERTION', url: null, node_id: nodeId('License', 0) };
  const key = spdxId.toLowerCase();
  return {
    key,
    name: known.name,
    spdx_id: spdxId,
    url: `${urls.api}/licenses/${key}`,
    node_id: nodeId('License', key),
  };
}

/**
 * The fields every repository shape shares (REST and the two webhook shapes); each caller's
 * return type checks them against its own schema.
 */
export function repositoryCommon(repo: Repo, urls: Urls, size: number) {
  const fullName = `${repo.owner.login}/${repo.name}`;
  const url = `${urls.api}/repos/${fullName}`;
  const htmlUrl = `${urls.web}/${fullName}`;
  const host = new URL(urls.web).host;
  const { meta } = repo;
  const visibility: 'public' | 'private' = repo.private ? 'private' : 'public';
  return {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: fullName,
    private: repo.private,
    html_url: htmlUrl,
    description: meta.description ?? null,
    fork: false,
    url,
    archive_url: `${url}/{archive_format}{/ref}`,
    assignees_url: `${url}/assignees{/user}`,
    blobs_url: `${url}/git/blobs{/sha}`,
    branches_url: `${url}/branches{/branch}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    comments_url: `${url}/comments{/number}`,
    commits_url: `${url}/commits{/sha}`,
    compare_url: `${url}/compare/{base}...{head}`,
    contents_url: `${url}/contents/{+path}`,
    contributors_url: `${url}/contributors`,
    deployments_url: `${url}/deployments`,
    downloads_url: `${url}/downloads`,
    events_url: `${url}/events`,
    forks_url: `${url}/forks`,
    git_commits_url: `${url}/git/commits{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_url: `git://${host}/${fullName}.git`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    issue_events_url: `${url}/issues/events{/number}`,
    issues_url: `${url}/issues{/number}`,
    keys_url: `${url}/keys{/key_id}`,
    labels_url: `${url}/labels{/name}`,
    languages_url: `${url}/languages`,
    merges_url: `${url}/merges`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    pulls_url: `${url}/pulls{/number}`,
    releases_url: `${url}/releases{/id}`,
    ssh_url: `git@${host}:${fullName}.git`,
    stargazers_url: `${url}/stargazers`,
    statuses_url: `${url}/statuses/{sha}`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    tags_url: `${url}/tags`,
    teams_url: `${url}/teams`,
    trees_url: `${url}/git/trees{/sha}`,
    clone_url: `${htmlUrl}.git`,
    mirror_url: null,
    hooks_url: `${url}/hooks`,
    svn_url: htmlUrl,
    homepage: meta.homepage ?? null,
    language: meta.language ?? null,
    forks_count: meta.forks_count ?? 0,
    stargazers_count: meta.stargazers_count ?? 0,
    watchers_count: meta.watchers_count ?? meta.stargazers_count ?? 0,
    size,
    default_branch: meta.default_branch,
    open_issues_count: meta.open_issues_count ?? 0,
    is_template: meta.is_template ?? false,
    topics: meta.topics ?? [],
    has_issues: meta.has_issues ?? true,
    has_projects: meta.has_projects ?? true,
    has_wiki: meta.has_wiki ?? !repo.private,
    has_pages: meta.has_pages ?? false,
    has_downloads: meta.has_downloads ?? true,
    has_discussions: meta.has_discussions ?? false,
    archived: meta.archived ?? false,
    disabled: meta.disabled ?? false,
    visibility,
    allow_forking: true,
    web_commit_signoff_required: false,
    forks: meta.forks_count ?? 0,
    open_issues: meta.open_issues_count ?? 0,
    watchers: meta.watchers_count ?? meta.stargazers_count ?? 0,
  };
}

/** What a repository shows an installation token in a list and on its own page alike. */
function repositoryAsSeen(repo: Repo, urls: Urls, size: number) {
  return {
    ...repositoryCommon(repo, urls, size),
    owner: simpleUser(repo.owner, urls),
    license: license(repo.meta.license, urls),
    created_at: repo.meta.created_at,
    updated_at: repo.meta.updated_at,
    pushed_at: repo.meta.pushed_at,
    permissions: { admin: false, maintain: false, push: false, triage: false, pull: true },
  };
}

/** A repository in a list (`GET /installation/repositories`). */
export function repository(repo: Repo, urls: Urls, size: number): Rest['repository'] {
  return repositoryAsSeen(repo, urls, size);
}

/** `GET /repos/{owner}/{repo}` and `GET /repositories/{id}`: the list's shape and a few fields more. */
export function fullRepository(repo: Repo, urls: Urls, size: number): Rest['full-repository'] {
  const seen = repositoryAsSeen(repo, urls, size);
  return {
    ...seen,
    ...(repo.owner.type === 'Organization' ? { organization: seen.owner } : {}),
    subscribers_count: repo.meta.subscribers_count ?? 0,
    network_count: repo.meta.network_count ?? 0,
    custom_properties: {},
  };
}

/** `GET /installation/repositories`: one page, with the count of the whole selection. */
export function installationRepositories(
  page: Rest['repository'][],
  totalCount: number,
): InstallationRepositories {
  return { total_count: totalCount, repositories: page, repository_selection: 'selected' };
}

/** `GET /app`: the App the JWT names, as GitHub shows it to itself. */
export function app(
  appId: number,
  owner: Account,
  createdAt: string,
  urls: Urls,
  installations: number,
): NonNullable<Rest['integration']> {
  return {
    id: appId,
    slug: APP_SLUG,
    node_id: nodeId('Integration', appId),
    client_id: `Iv23stand${appId}`,
    owner: simpleUser(owner, urls),
    name: 'repo402 stand-in',
    description: 'Reads the repositories creators list on repo402',
    external_url: 'https://repo402.test',
    html_url: `${urls.web}/apps/${APP_SLUG}`,
    created_at: createdAt,
    updated_at: createdAt,
    permissions: { ...GRANTED_PERMISSIONS },
    events: ['create', 'push', 'repository'],
    installations_count: installations,
  };
}

/**
 * Typed as the webhook schema's installation, the narrower of the two (`account.id: number`); the
 * API route assigns it to the REST schema's type, so it is checked against both.
 */
export function installation(
  install: Installation,
  urls: Urls,
  appId: number,
): webhookComponents['schemas']['installation'] {
  const { account } = install;
  return {
    id: install.id,
    client_id: `Iv23stand${appId}`,
    account: simpleUser(account, urls),
    repository_selection: 'selected',
    access_tokens_url: `${urls.api}/app/installations/${install.id}/access_tokens`,
    repositories_url: `${urls.api}/installation/repositories`,
    html_url:
      account.type === 'Organization'
        ? `${urls.web}/organizations/${account.login}/settings/installations/${install.id}`
        : `${urls.web}/settings/installations/${install.id}`,
    app_id: appId,
    app_slug: APP_SLUG,
    target_id: account.id,
    target_type: account.type,
    permissions: GRANTED_PERMISSIONS,
    events: ['create', 'push'],
    created_at: install.createdAt,
    updated_at: install.updatedAt,
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: install.suspendedAt ? simpleUser(account, urls) : null,
    suspended_at: install.suspendedAt,
  };
}

export function installationToken(issued: IssuedToken): Rest['installation-token'] {
  return {
    token: issued.token,
    expires_at: iso(issued.expiresAt),
    permissions: GRANTED_PERMISSIONS,
    repository_selection: 'selected',
  };
}

export function tag(repo: Repo, urls: Urls, name: string, commit: string): Rest['tag'] {
  const url = `${urls.api}/repos/${repo.owner.login}/${repo.name}`;
  return {
    name,
    commit: { sha: commit, url: `${url}/commits/${commit}` },
    zipball_url: `${url}/zipball/refs/tags/${name}`,
    tarball_url: `${url}/tarball/refs/tags/${name}`,
    node_id: nodeId('Ref', `${repo.id}:refs/tags/${name}`),
  };
}

/**
 * `GET /repos/{owner}/{repo}/commits/{ref}`. `author`/`committer` are the accounts GitHub links by
 * e-mail (the stand-in knows only noreply addresses), else null as on GitHub. `stats` and `files`
 * (the diff) are left out: optional in the schema, and nothing in this rail reads them.
 */
export function commit(repo: Repo, urls: Urls, info: CommitInfo, accounts: Account[]): Rest['commit'] {
  const fullName = `${repo.owner.login}/${repo.name}`;
  const url = `${urls.api}/repos/${fullName}`;
  const linked = (email: string) => {
    const account = accounts.find((a) => noreplyEmail(a) === email);
    return account ? simpleUser(account, urls) : null;
  };
  const person = (p: CommitInfo['author']) => ({
    name: p.name,
    email: p.email,
    date: iso(Date.parse(p.date)),
  });
  return {
    url: `${url}/commits/${info.sha}`,
    sha: info.sha,
    node_id: nodeId('Commit', `${repo.id}:${info.sha}`),
    html_url: `${urls.web}/${fullName}/commit/${info.sha}`,
    comments_url: `${url}/commits/${info.sha}/comments`,
    commit: {
      url: `${url}/git/commits/${info.sha}`,
      author: person(info.author),
      committer: person(info.committer),
      message: info.message,
      comment_count: 0,
      tree: { sha: info.tree, url: `${url}/git/trees/${info.tree}` },
      verification: {
        verified: false,
        reason: 'unsigned',
        signature: null,
        payload: null,
        verified_at: null,
      },
    },
    author: linked(info.author.email),
    committer: linked(info.committer.email),
    parents: info.parents.map((sha) => ({
      sha,
      url: `${url}/commits/${sha}`,
      html_url: `${urls.web}/${fullName}/commit/${sha}`,
    })),
  };
}

export function gitTree(
  repo: Repo,
  urls: Urls,
  sha: string,
  entries: TreeEntry[],
  truncated: boolean,
): Rest['git-tree'] {
  const url = `${urls.api}/repos/${repo.owner.login}/${repo.name}/git`;
  return {
    sha,
    url: `${url}/trees/${sha}`,
    tree: entries.map((entry) => ({
      ...entry,
      ...(entry.type === 'commit'
        ? {}
        : { url: `${url}/${entry.type === 'blob' ? 'blobs' : 'trees'}/${entry.sha}` }),
    })),
    truncated,
  };
}

export function errorBody(status: number, message: string, documentationUrl: string): Rest['basic-error'] {
  return { message, documentation_url: documentationUrl, status: String(status) };
}
