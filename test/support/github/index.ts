/**
 * A GitHub stand-in for the GitHub App rail: a real HTTP server that answers what the rail asks
 * of GitHub, shaped after GitHub's documented REST responses, serves the repositories over git
 * smart HTTP, and sends signed webhook deliveries. Clients reach it as they reach GitHub
 * Enterprise Server: `@octokit/*` with `baseUrl: gh.apiUrl`, the `git` binary with `clone_url`.
 *
 *   const gh = await startGitHubStandIn({ truncateTreesAt?, now? });
 *   gh.apiUrl / gh.webUrl            'http://127.0.0.1:PORT/api/v3' / 'http://127.0.0.1:PORT'
 *   gh.appId / gh.privateKeyPem      the App (PKCS#1 PEM, as GitHub hands it out)
 *   gh.webhookSecret
 *
 *   gh.createInstallation({ account: { login, type? } })            -> { id }
 *   gh.setUser(login, { type?, name?, bio?, blog?, company?, ... })   GET /users/{login} fields
 *   await gh.createRepo({ owner, name, private?, installationId?, ...metadata })
 *                                                                   -> { id, owner, name, fullName, gitDir, cloneUrl }
 *   gh.updateRepo(repo, metadata) / gh.setPrivate(repo, boolean)
 *   await gh.changeVisibility(repo, { private, webhookUrl? })     -> deliveries (`repository` publicized/privatized)
 *   await gh.pushTag(repo, { tag, files, annotated?, webhookUrl? }) -> { commit, tree, deliveries }
 *   await gh.moveTag(repo, tag, files, { annotated?, webhookUrl? }) -> { commit, tree, deliveries }
 *   await gh.deleteTag(repo, tag, { webhookUrl? })                  -> deliveries
 *   await gh.removeRepoFromInstallation(repo, { webhookUrl? })      -> deliveries
 *   await gh.addRepoToInstallation(repo, installationId, { webhookUrl? })
 *   await gh.suspendInstallation(id, { webhookUrl? }) / unsuspendInstallation(id, …) / uninstall(id, …)
 *   await gh.deliver(url, event, payload, { deliveryId?, signature?: 'valid'|'wrong'|'missing', secret?, omitHeaders? })
 *                                                                   -> { status, body, deliveryId }
 *   await gh.payloads.tagCreate(repo, tag) / tagPush(repo, tag, commit, before?) / tagDelete(repo, tag, before)
 *   await gh.payloads.repositoryVisibility(repo)                     the `repository` event for its visibility now
 *   gh.payloads.installation(action, id) / installationRepositories(action, id, repos)
 *   gh.tokensIssued   every installation token handed out (grep logs for them)
 *   gh.tokenRequests  token requests received, refused ones included (checks token caching)
 *   gh.requests       [{ method, path, authorization: 'jwt'|'token'|'basic'|'none', contentEncoding?, status? }]
 *   await gh.close()  stops the server and removes its directories
 *
 * `repo` is the handle `createRepo` returned or an `owner/name` string. A `webhookUrl` makes a
 * control send the events GitHub would send for the change, after the change is made.
 *
 * GitHub's rules it keeps: a private repository is visible only to tokens of the installation
 * that has it selected and is a 404 to everyone else (never a 403); public repositories are
 * readable by anyone, anonymous callers and other installations' tokens included; tokens last an
 * hour and die with their installation; a suspended installation gets no tokens and its tokens
 * answer 403; git takes the token as the Basic password of `x-access-token` and refuses pushes.
 */

import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createApiHandler } from './api.js';
import { createGitHandler } from './git-http.js';
import { createAppKeys } from './jwt.js';
import { type InstallationAction, Payloads } from './payloads.js';
import * as repos from './repos.js';
import { listen, type RecordedRequest } from './server.js';
import { noreplyEmail, type Urls } from './shapes.js';
import { type AccountType, GitHubState, type Profile, type Repo, type RepoMetadata } from './state.js';
import { type Delivery, type DeliveryOptions, deliver, type Hook, newHook } from './webhooks.js';

export type { AccountType, Delivery, DeliveryOptions, Profile, RecordedRequest, RepoMetadata };

export interface GitHubStandInOptions {
  /** Entries after which a tree listing is cut with `truncated: true`; GitHub's limit is 100,000. */
  truncateTreesAt?: number;
  /** The stand-in's clock (ms): token expiry, JWT checks and the Date header follow it. */
  now?: () => number;
}

export interface RepoHandle {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  /** The bare repository the stand-in serves. */
  gitDir: string;
  cloneUrl: string;
}

export type RepoRef = string | { fullName: string };

export interface CreateRepoOptions extends RepoMetadata {
  owner: string;
  name: string;
  private?: boolean;
  /** Adds the repository to this installation's selection. */
  installationId?: number;
}

export interface WebhookOption {
  /** Where to send the events GitHub would send for this change. */
  webhookUrl?: string;
}

export interface TagOptions extends WebhookOption {
  /** The annotated tag's message; a lightweight tag when omitted. */
  annotated?: string;
}

export async function startGitHubStandIn(options: GitHubStandInOptions = {}): Promise<GitHubStandIn> {
  const [root, keys] = await Promise.all([
    mkdtemp(path.join(os.tmpdir(), 'repo402-github-')),
    createAppKeys(),
  ]);
  const state = new GitHubState(randomInt(100_000, 1_000_000), options.now ?? Date.now);
  const log: RecordedRequest[] = [];
  // The handlers hold this object; its addresses are filled in once the port is known.
  const urls: Urls = { api: '', web: '' };
  const { server, port } = await listen(
    {
      api: createApiHandler({
        state,
        urls,
        publicKey: keys.publicKey,
        truncateTreesAt: options.truncateTreesAt ?? 100_000,
      }),
      git: createGitHandler(state),
    },
    log,
    state.now,
  );
  urls.web = `http://127.0.0.1:${port}`;
  urls.api = `${urls.web}/api/v3`;
  return new GitHubStandIn(server, root, state, urls, keys.privateKeyPem, log);
}

export class GitHubStandIn {
  readonly apiUrl: string;
  readonly webUrl: string;
  readonly appId: number;
  readonly webhookSecret = randomBytes(20).toString('hex');
  /** Builders of the payloads GitHub sends, for `deliver`; the controls below send them for you. */
  readonly payloads: {
    tagCreate(repo: RepoRef, tag: string): ReturnType<Payloads['tagCreate']>;
    tagPush(repo: RepoRef, tag: string, commit: string, before?: string): ReturnType<Payloads['tagPush']>;
    tagDelete(repo: RepoRef, tag: string, before: string): ReturnType<Payloads['tagDelete']>;
    repositoryVisibility(repo: RepoRef): ReturnType<Payloads['repositoryVisibility']>;
    installation(action: InstallationAction, installationId: number): ReturnType<Payloads['installation']>;
    installationRepositories(
      action: 'added' | 'removed',
      installationId: number,
      repos: RepoRef[],
    ): ReturnType<Payloads['installationRepositories']>;
  };
  private readonly hook: Hook;
  private readonly builders: Payloads;

  constructor(
    private readonly server: http.Server,
    private readonly root: string,
    private readonly state: GitHubState,
    private readonly urls: Urls,
    readonly privateKeyPem: string,
    readonly requests: RecordedRequest[],
  ) {
    this.apiUrl = urls.api;
    this.webUrl = urls.web;
    this.appId = state.appId;
    this.hook = newHook(this.webhookSecret, state.appId);
    const builders = new Payloads(state, urls);
    this.builders = builders;
    this.payloads = {
      tagCreate: (repo, tag) => builders.tagCreate(this.repo(repo), tag),
      tagPush: (repo, tag, commit, before) => builders.tagPush(this.repo(repo), tag, commit, before),
      tagDelete: (repo, tag, before) => builders.tagDelete(this.repo(repo), tag, before),
      repositoryVisibility: (repo) => builders.repositoryVisibility(this.repo(repo)),
      installation: (action, id) => builders.installation(action, state.installation(id)),
      installationRepositories: (action, id, list) =>
        builders.installationRepositories(
          action,
          state.installation(id),
          list.map((r) => this.repo(r)),
        ),
    };
  }

  get tokensIssued(): readonly string[] {
    return this.state.tokensIssued;
  }

  get tokenRequests(): number {
    return this.state.tokenRequests;
  }

  createInstallation(options: { account: { login: string; type?: AccountType } }): { id: number } {
    const account = this.state.account(options.account.login, options.account.type);
    for (const existing of this.state.installations.values()) {
      if (existing.account === account) throw new Error(`the App is already installed on ${account.login}`);
    }
    return { id: this.state.createInstallation(account).id };
  }

  setUser(login: string, fields: Profile & { type?: AccountType }): void {
    const { type, ...profile } = fields;
    const account = this.state.account(login, type);
    Object.assign(account.profile, profile);
  }

  async createRepo(options: CreateRepoOptions): Promise<RepoHandle> {
    const { owner, name, private: isPrivate = true, installationId, ...metadata } = options;
    if (this.state.repoByName(owner, name)) throw new Error(`${owner}/${name} exists`);
    const id = this.state.newRepoId();
    const branch = metadata.default_branch ?? 'main';
    const dirs = await repos.createRepoDirs(this.root, id, branch);
    const now = this.state.isoNow();
    const repo: Repo = {
      id,
      owner: this.state.account(owner),
      name,
      private: isPrivate,
      ...dirs,
      meta: { created_at: now, updated_at: now, pushed_at: now, ...metadata, default_branch: branch },
    };
    this.state.repos.set(id, repo);
    const handle = this.handle(repo);
    if (installationId !== undefined) await this.addRepoToInstallation(handle, installationId);
    return handle;
  }

  updateRepo(ref: RepoRef, metadata: RepoMetadata): void {
    const repo = this.repo(ref);
    if (metadata.default_branch && metadata.default_branch !== repo.meta.default_branch) {
      throw new Error('default_branch is fixed when the repository is created');
    }
    Object.assign(repo.meta, metadata);
  }

  setPrivate(ref: RepoRef, isPrivate: boolean): void {
    this.repo(ref).private = isPrivate;
  }

  /** Makes the repository private or public, and sends the `repository` event GitHub sends for it. */
  async changeVisibility(ref: RepoRef, options: WebhookOption & { private: boolean }): Promise<Delivery[]> {
    const repo = this.repo(ref);
    repo.private = options.private;
    repo.meta.updated_at = this.state.isoAfter(repo.meta.updated_at);
    return this.send(options.webhookUrl, [['repository', () => this.builders.repositoryVisibility(repo)]]);
  }

  /** Commits exactly `files` on the default branch and pushes it with the new tag. */
  async pushTag(
    ref: RepoRef,
    options: TagOptions & { tag: string; files: Record<string, string> },
  ): Promise<{ commit: string; tree: string; deliveries: Delivery[] }> {
    const repo = this.repo(ref);
    if (await repos.tagCommit(repo.gitDir, options.tag))
      throw new Error(`tag ${options.tag} exists; use moveTag`);
    const result = await this.commitAndTag(repo, options.tag, options.files, options);
    const deliveries = await this.send(options.webhookUrl, [
      ['create', () => this.builders.tagCreate(repo, options.tag)],
      ['push', () => this.builders.tagPush(repo, options.tag, result.commit)],
    ]);
    return { ...result, deliveries };
  }

  /** Re-points an existing tag at a new commit of exactly `files` (a forced tag push). */
  async moveTag(
    ref: RepoRef,
    tag: string,
    files: Record<string, string>,
    options: TagOptions = {},
  ): Promise<{ commit: string; tree: string; deliveries: Delivery[] }> {
    const repo = this.repo(ref);
    const before = await repos.tagCommit(repo.gitDir, tag);
    if (!before) throw new Error(`no tag ${tag}`);
    const result = await this.commitAndTag(repo, tag, files, { ...options, force: true });
    const deliveries = await this.send(options.webhookUrl, [
      ['push', () => this.builders.tagPush(repo, tag, result.commit, before)],
    ]);
    return { ...result, deliveries };
  }

  async deleteTag(ref: RepoRef, tag: string, options: WebhookOption = {}): Promise<Delivery[]> {
    const repo = this.repo(ref);
    const before = await repos.tagCommit(repo.gitDir, tag);
    if (!before) throw new Error(`no tag ${tag}`);
    const payload = await this.builders.tagDelete(repo, tag, before);
    await repos.deleteTag(repo, tag);
    this.touchPushed(repo);
    return this.send(options.webhookUrl, [['push', async () => payload]]);
  }

  async addRepoToInstallation(
    ref: RepoRef,
    installationId: number,
    options: WebhookOption = {},
  ): Promise<Delivery[]> {
    const repo = this.repo(ref);
    const installation = this.state.installation(installationId);
    if (installation.account !== repo.owner) {
      throw new Error(
        `${installation.account.login}'s installation cannot hold ${repo.owner.login}'s repositories`,
      );
    }
    installation.repoIds.add(repo.id);
    installation.updatedAt = this.state.isoAfter(installation.updatedAt);
    return this.send(options.webhookUrl, [
      [
        'installation_repositories',
        async () => this.builders.installationRepositories('added', installation, [repo]),
      ],
    ]);
  }

  async removeRepoFromInstallation(ref: RepoRef, options: WebhookOption = {}): Promise<Delivery[]> {
    const repo = this.repo(ref);
    const installation = this.state.installationOf(repo);
    if (!installation) throw new Error(`${repo.owner.login}/${repo.name} is in no installation`);
    installation.repoIds.delete(repo.id);
    installation.updatedAt = this.state.isoAfter(installation.updatedAt);
    return this.send(options.webhookUrl, [
      [
        'installation_repositories',
        async () => this.builders.installationRepositories('removed', installation, [repo]),
      ],
    ]);
  }

  async suspendInstallation(id: number, options: WebhookOption = {}): Promise<Delivery[]> {
    const installation = this.state.installation(id);
    installation.suspendedAt = this.state.isoAfter(installation.updatedAt);
    installation.updatedAt = installation.suspendedAt;
    return this.send(options.webhookUrl, [
      ['installation', async () => this.builders.installation('suspend', installation)],
    ]);
  }

  async unsuspendInstallation(id: number, options: WebhookOption = {}): Promise<Delivery[]> {
    const installation = this.state.installation(id);
    installation.suspendedAt = null;
    installation.updatedAt = this.state.isoAfter(installation.updatedAt);
    return this.send(options.webhookUrl, [
      ['installation', async () => this.builders.installation('unsuspend', installation)],
    ]);
  }

  async uninstall(id: number, options: WebhookOption = {}): Promise<Delivery[]> {
    const payload = this.builders.installation('deleted', this.state.installation(id));
    this.state.deleteInstallation(id);
    return this.send(options.webhookUrl, [['installation', async () => payload]]);
  }

  deliver(url: string, event: string, payload: unknown, options?: DeliveryOptions): Promise<Delivery> {
    return deliver(this.hook, url, event, payload, options);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.root, { recursive: true, force: true });
  }

  private repo(ref: RepoRef): Repo {
    const fullName = typeof ref === 'string' ? ref : ref.fullName;
    const [owner = '', name = ''] = fullName.split('/');
    const repo = this.state.repoByName(owner, name);
    if (!repo) throw new Error(`no repository ${fullName}`);
    return repo;
  }

  private handle(repo: Repo): RepoHandle {
    const fullName = `${repo.owner.login}/${repo.name}`;
    return {
      id: repo.id,
      owner: repo.owner.login,
      name: repo.name,
      fullName,
      gitDir: repo.gitDir,
      cloneUrl: `${this.urls.web}/${fullName}.git`,
    };
  }

  private async commitAndTag(
    repo: Repo,
    tag: string,
    files: Record<string, string>,
    options: TagOptions & { force?: boolean },
  ): Promise<{ commit: string; tree: string }> {
    const person = { name: repo.owner.login, email: noreplyEmail(repo.owner) };
    const result = await repos.commitFiles(repo, files, tag, person);
    await repos.pushTag(repo, repo.meta.default_branch, tag, {
      ...(options.annotated === undefined ? {} : { annotated: options.annotated }),
      force: options.force ?? false,
      tagger: person,
    });
    this.touchPushed(repo);
    return result;
  }

  private touchPushed(repo: Repo): void {
    repo.meta.pushed_at = this.state.isoAfter(repo.meta.pushed_at);
  }

  /** Events go one after the other, in GitHub's order for the change; none without a URL. */
  private async send(
    url: string | undefined,
    events: Array<[string, () => Promise<unknown>]>,
  ): Promise<Delivery[]> {
    if (!url) return [];
    const deliveries: Delivery[] = [];
    for (const [event, build] of events) deliveries.push(await this.deliver(url, event, await build()));
    return deliveries;
  }
}
