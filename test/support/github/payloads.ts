import type { components } from '@octokit/openapi-webhooks-types';
import { branchesAt, changedPaths, readCommit, sizeKb } from './repos.js';
import {
  installation,
  license,
  nodeId,
  noreplyEmail,
  repositoryCommon,
  simpleUser,
  type Urls,
} from './shapes.js';
import type { Account, GitHubState, Installation, Repo } from './state.js';

/**
 * Webhook payloads shaped after the schemas GitHub publishes for them
 * (@octokit/openapi-webhooks-types); each builder's return type is that schema.
 */
type Hook = components['schemas'];

export type InstallationAction = 'deleted' | 'suspend' | 'unsuspend';
export type InstallationPayload =
  | Hook['webhook-installation-deleted']
  | Hook['webhook-installation-suspend']
  | Hook['webhook-installation-unsuspend'];
export type RepositoryVisibilityPayload =
  | Hook['webhook-repository-publicized']
  | Hook['webhook-repository-privatized'];
export type InstallationRepositoriesPayload =
  | Hook['webhook-installation-repositories-added']
  | Hook['webhook-installation-repositories-removed'];

const ZERO_SHA = '0000000000000000000000000000000000000000';

export class Payloads {
  constructor(
    private readonly state: GitHubState,
    private readonly urls: Urls,
  ) {}

  /** The `create` event GitHub sends when a tag is pushed (beside the tag's `push`). */
  async tagCreate(repo: Repo, tag: string): Promise<Hook['webhook-create']> {
    return {
      ref: tag,
      ref_type: 'tag',
      master_branch: repo.meta.default_branch,
      description: repo.meta.description ?? null,
      pusher_type: 'user',
      repository: await this.repository(repo),
      ...this.context(repo),
    };
  }

  /** `push` of a tag: new when `before` is omitted, else re-pointed (a forced push). */
  async tagPush(repo: Repo, tag: string, after: string, before?: string): Promise<Hook['webhook-push']> {
    const html = `${this.urls.web}/${repo.owner.login}/${repo.name}`;
    const [info, changes, branches] = await Promise.all([
      readCommit(repo.gitDir, after),
      changedPaths(repo.gitDir, after),
      branchesAt(repo.gitDir, after),
    ]);
    const person = (p: { name: string; email: string; date: string }) => {
      const account = this.linkedAccount(p.email);
      return { name: p.name, email: p.email, date: p.date, ...(account ? { username: account.login } : {}) };
    };
    return {
      ...(await this.tagPushCommon(repo, tag)),
      before: before ?? ZERO_SHA,
      after,
      created: before === undefined,
      deleted: false,
      forced: before !== undefined,
      base_ref: branches[0] ?? null,
      compare:
        before === undefined
          ? `${html}/compare/${tag}`
          : `${html}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
      head_commit: {
        id: info.sha,
        tree_id: info.tree,
        distinct: true,
        message: info.message,
        timestamp: info.committer.date,
        url: `${html}/commit/${info.sha}`,
        author: person(info.author),
        committer: person(info.committer),
        ...changes,
      },
    };
  }

  /** `push` deleting a tag that pointed at `before`. */
  async tagDelete(repo: Repo, tag: string, before: string): Promise<Hook['webhook-push']> {
    const html = `${this.urls.web}/${repo.owner.login}/${repo.name}`;
    return {
      ...(await this.tagPushCommon(repo, tag)),
      before,
      after: ZERO_SHA,
      created: false,
      deleted: true,
      forced: false,
      base_ref: null,
      compare: `${html}/compare/${before.slice(0, 12)}...${ZERO_SHA.slice(0, 12)}`,
      head_commit: null,
    };
  }

  /** The `repository` event GitHub sends when a repository is made public or private. */
  async repositoryVisibility(repo: Repo): Promise<RepositoryVisibilityPayload> {
    const common = { repository: await this.repository(repo), ...this.context(repo) };
    return repo.private ? { action: 'privatized', ...common } : { action: 'publicized', ...common };
  }

  installation(action: InstallationAction, install: Installation): InstallationPayload {
    return {
      action,
      installation: installation(install, this.urls, this.state.appId),
      repositories: this.selected(install).map(repositoryReference),
      requester: null,
      sender: simpleUser(install.account, this.urls),
      ...this.organization(install.account),
    };
  }

  installationRepositories(
    action: 'added' | 'removed',
    install: Installation,
    repos: Repo[],
  ): InstallationRepositoriesPayload {
    const changed = repos.map(repositoryReference);
    const common = {
      installation: installation(install, this.urls, this.state.appId),
      repository_selection: 'selected' as const,
      requester: this.webhooksUser(install.account),
      sender: simpleUser(install.account, this.urls),
      ...this.organization(install.account),
    };
    return action === 'added'
      ? { ...common, action, repositories_added: changed, repositories_removed: [] }
      : { ...common, action, repositories_added: [], repositories_removed: changed };
  }

  private async tagPushCommon(repo: Repo, tag: string) {
    const common = repositoryCommon(repo, this.urls, await this.size(repo));
    const detected = license(repo.meta.license, this.urls);
    const seconds = (at: string) => Math.floor(Date.parse(at) / 1000);
    return {
      ref: `refs/tags/${tag}`,
      commits: [],
      pusher: { name: repo.owner.login, email: noreplyEmail(repo.owner) },
      // The push event's repository is a shape of its own: timestamps in seconds, the owner with name and e-mail.
      repository: {
        ...common,
        owner: { ...this.webhooksUser(repo.owner), name: repo.owner.login, email: null },
        license: detected && { ...detected, spdx_id: detected.spdx_id ?? 'NOASSERTION' },
        created_at: seconds(repo.meta.created_at),
        updated_at: repo.meta.updated_at,
        pushed_at: seconds(repo.meta.pushed_at),
        stargazers: common.stargazers_count,
        master_branch: repo.meta.default_branch,
        custom_properties: {},
      },
      ...this.context(repo),
    };
  }

  private async repository(repo: Repo): Promise<Hook['repository-webhooks']> {
    return {
      ...repositoryCommon(repo, this.urls, await this.size(repo)),
      owner: simpleUser(repo.owner, this.urls),
      license: license(repo.meta.license, this.urls),
      created_at: repo.meta.created_at,
      updated_at: repo.meta.updated_at,
      pushed_at: repo.meta.pushed_at,
      custom_properties: {},
    };
  }

  /** GitHub delivers a repository's events to an App only while the repository is in one of its installations. */
  private context(repo: Repo) {
    const install = this.state.installationOf(repo);
    if (!install) {
      throw new Error(
        `${repo.owner.login}/${repo.name} is in no installation: GitHub would not send its events to the App`,
      );
    }
    return {
      installation: { id: install.id, node_id: nodeId('IntegrationInstallation', install.id) },
      sender: simpleUser(repo.owner, this.urls),
      ...this.organization(repo.owner),
    };
  }

  /** The older user shape some payloads still carry (`requester`, a push's repository owner). */
  private webhooksUser(account: Account): NonNullable<Hook['webhooks_user']> {
    const { name: _, ...user } = simpleUser(account, this.urls);
    return { ...user, name: account.profile.name ?? account.login, gravatar_id: '', type: account.type };
  }

  private organization(account: Account): { organization?: Hook['organization-simple-webhooks'] } {
    if (account.type !== 'Organization') return {};
    const url = `${this.urls.api}/orgs/${account.login}`;
    return {
      organization: {
        login: account.login,
        id: account.id,
        node_id: nodeId('Organization', account.id),
        url,
        repos_url: `${url}/repos`,
        events_url: `${url}/events`,
        hooks_url: `${url}/hooks`,
        issues_url: `${url}/issues`,
        members_url: `${url}/members{/member}`,
        public_members_url: `${url}/public_members{/member}`,
        avatar_url: `https://avatars.githubusercontent.com/u/${account.id}?v=4`,
        description: null,
      },
    };
  }

  private selected(install: Installation): Repo[] {
    return [...install.repoIds].map((id) => this.state.repos.get(id)).filter((repo) => repo !== undefined);
  }

  private linkedAccount(email: string): Account | undefined {
    return [...this.state.accounts.values()].find((account) => noreplyEmail(account) === email);
  }

  private size(repo: Repo): Promise<number> {
    return repo.meta.size === undefined ? sizeKb(repo.gitDir) : Promise.resolve(repo.meta.size);
  }
}

function repositoryReference(repo: Repo) {
  return {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: `${repo.owner.login}/${repo.name}`,
    private: repo.private,
  };
}
