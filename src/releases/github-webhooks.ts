import { createHash } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
import type { AppContext } from '../context.js';
import { lossReason } from '../github/access.js';
import {
  type Listing,
  listingById,
  liveGitHubListings,
  markSourceState,
  rebindInstallation,
} from '../listings/service.js';
import { AppError, isAppError } from '../platform/errors.js';
import { versionOfTag } from '../platform/versions.js';
import { requestCut } from './cut/claims.js';
import { cutSource, isSourceRefusal, reachableSource } from './cut/sources.js';
import { cutVersions, earlierDelivery, recordDelivery, recordTagChange } from './store.js';

/**
 * GitHub App webhook deliveries. A delivery is believed only when its `X-Hub-Signature-256` is the
 * HMAC of its exact bytes under the App's webhook secret, and handled once per `X-GitHub-Delivery`
 * and once per content: GitHub signs the body alone, with no time in it, so whoever captured one
 * delivery could otherwise send it again forever under fresh delivery ids. The same event with the
 * same body within `REPLAY_WINDOW_MS` is a repeat (every GitHub event carries the time it
 * describes, so two real events do not share a body).
 *
 * - a `vX.Y.Z` tag created or pushed: the version is claimed and cut exactly as sync would
 *   (GitHub is asked what the tag names; its size is checked before the cut fetches it); a tag
 *   whose version was cut already at another commit is recorded as moved, never re-cut;
 * - a released tag deleted: recorded, nothing else changes;
 * - the App uninstalled or suspended, or a repository removed from it: the listings it backs are
 *   marked unreachable (sync says so; what was cut stays on sale and downloadable); unsuspended or
 *   a repository added (back): marked reachable again, bound to that installation;
 * - a repository made public or private (`repository`): GitHub is asked afresh and the listing
 *   marked `public` or `ok`.
 *
 * A delivery is `handled` when it changed something: a version claimed, a tag change recorded, a
 * listing's source state (or installation) changed, also on the way (a tag event finding the
 * repository public).
 */

/** How long a delivery's content is remembered: GitHub redelivers for three days at most. */
export const REPLAY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

export interface Delivery {
  event: string | undefined;
  deliveryId: string | undefined;
  signature: string | undefined;
  body: Buffer;
}

export async function handleGitHubDelivery(
  ctx: AppContext,
  delivery: Delivery,
): Promise<{ handled: boolean; duplicate?: boolean; duplicate_of?: string }> {
  const github = ctx.config.github;
  if (!github) throw new AppError('not_found', { message: 'No GitHub App is configured on this server' });
  const verifier = new Webhooks({ secret: github.webhookSecret });
  const raw = delivery.body.toString('utf8');
  const signed = delivery.signature !== undefined && (await verifier.verify(raw, delivery.signature));
  if (!signed) {
    ctx.log.warn(
      {
        event: delivery.event,
        deliveryId: delivery.deliveryId,
        signature: delivery.signature ? 'wrong' : 'missing',
      },
      'GitHub webhook refused: bad or missing signature',
    );
    throw new AppError('invalid_signature', {
      message: 'The delivery is not signed with this App’s webhook secret (X-Hub-Signature-256)',
    });
  }
  // Signed with the secret, but not a delivery as GitHub makes them: a malformed request, not a
  // forged one.
  if (!delivery.event || !delivery.deliveryId) {
    const missing = [
      ...(delivery.event ? [] : [['x-github-event', 'X-GitHub-Event', 'the event name'] as const]),
      ...(delivery.deliveryId
        ? []
        : [['x-github-delivery', 'X-GitHub-Delivery', 'the delivery id'] as const]),
    ];
    ctx.log.warn(
      { event: delivery.event, deliveryId: delivery.deliveryId },
      'GitHub webhook refused: signed, but a header is missing',
    );
    throw AppError.invalid(
      missing.map(([field, , what]) => ({ field, reason: `required: ${what}` })),
      `A webhook delivery must carry ${missing.map(([, header]) => header).join(' and ')}`,
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    throw AppError.invalid([{ field: 'body', reason: 'not JSON' }]);
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
    throw AppError.invalid([{ field: 'body', reason: 'not a JSON object' }]);
  }
  const db = ctx.database.db;
  const receivedAt = ctx.clock.now();
  const contentSha256 = createHash('sha256')
    .update(`${delivery.event}\n`)
    .update(delivery.body)
    .digest('hex');
  const earlier = await earlierDelivery(db, {
    deliveryId: delivery.deliveryId,
    contentSha256,
    since: new Date(receivedAt.getTime() - REPLAY_WINDOW_MS),
  });
  if (earlier !== undefined) {
    const repeat =
      earlier === delivery.deliveryId
        ? 'GitHub redelivery ignored'
        : 'GitHub delivery replayed under a new id; ignored';
    ctx.log.info({ deliveryId: delivery.deliveryId, earlier, event: delivery.event }, repeat);
    return { handled: false, duplicate: true, duplicate_of: earlier };
  }
  // Every effect below is idempotent in the database (claims, tag changes, source states), so the
  // delivery is recorded after it was handled: a crash in between leaves it to GitHub's redelivery
  // (or sync) instead of marking undone work as done.
  const handled = await dispatch(ctx, delivery.event, payload as GitHubPayload);
  await recordDelivery(db, {
    deliveryId: delivery.deliveryId,
    event: delivery.event,
    receivedAt,
    contentSha256,
  });
  ctx.log.info({ deliveryId: delivery.deliveryId, event: delivery.event, handled }, 'GitHub webhook handled');
  return { handled };
}

/** The parts of GitHub's webhook payloads read here. */
interface GitHubPayload {
  action?: string;
  ref?: string;
  ref_type?: string;
  deleted?: boolean;
  repository?: { id: number };
  installation?: { id: number };
  repositories_removed?: Array<{ id: number }>;
  repositories_added?: Array<{ id: number }>;
  /** `installation` `created`: the repositories the new installation was given. */
  repositories?: Array<{ id: number }>;
}

async function dispatch(ctx: AppContext, event: string, payload: GitHubPayload): Promise<boolean> {
  const installationId = payload.installation?.id;
  if (installationId === undefined) return false;
  switch (event) {
    case 'create':
      if (payload.ref_type !== 'tag' || !payload.ref || !payload.repository) return false;
      return tagChanged(ctx, installationId, payload.repository.id, payload.ref, false);
    case 'push': {
      const tag = payload.ref?.startsWith('refs/tags/') ? payload.ref.slice('refs/tags/'.length) : undefined;
      if (!tag || !payload.repository) return false;
      return tagChanged(ctx, installationId, payload.repository.id, tag, payload.deleted === true);
    }
    case 'installation':
      if (payload.action === 'created')
        return repositoriesAdded(ctx, installationId, payload.repositories ?? []);
      return installationChanged(ctx, installationId, payload.action);
    case 'installation_repositories':
      return repositoriesChanged(ctx, installationId, payload);
    case 'repository':
      if (!payload.repository) return false;
      return repositoryChanged(ctx, installationId, payload.repository.id);
    default:
      return false;
  }
}

/** The live listings a repository backs through this installation. */
async function listingsOf(ctx: AppContext, installationId: number, repoId: number): Promise<Listing[]> {
  return (await liveGitHubListings(ctx.database.db, { repoId })).filter(
    (listing) => listing.githubInstallationId === installationId,
  );
}

/**
 * A release tag created, pushed or deleted (`deleted`). A new version is claimed and cut; a
 * version cut already is never cut again: if the tag now names another commit, or none, that is
 * recorded for the creator and the release stays what was sold.
 */
async function tagChanged(
  ctx: AppContext,
  installationId: number,
  repoId: number,
  tag: string,
  deleted: boolean,
): Promise<boolean> {
  const version = versionOfTag(tag);
  if (!version) return false;
  let handled = false;
  for (const listing of await listingsOf(ctx, installationId, repoId)) {
    // Asking GitHub about the tag may also have found the repository public, out of reach, or back.
    const done = await tagChangedFor(ctx, listing, tag, version, deleted);
    handled = done || (await stateMoved(ctx, listing)) || handled;
  }
  return handled;
}

/** `tagChanged` for one listing: true when a version was claimed or a tag change recorded. */
async function tagChangedFor(
  ctx: AppContext,
  listing: Listing,
  tag: string,
  version: string,
  deleted: boolean,
): Promise<boolean> {
  try {
    const commit = deleted ? null : await (await cutSource(ctx, listing)).resolveCommit(`refs/tags/${tag}`);
    if (commit === undefined) return false;
    const claimed = (await cutVersions(ctx.database.db, listing.id)).get(version);
    if (claimed !== undefined) {
      return claimed !== commit && (await tagMoved(ctx, listing, tag, claimed, commit));
    }
    if (commit === null) return false;
    // A tree over the limits is claimed all the same: the cut records it as a failing release
    // (as for a hosted push) without fetching it.
    const cut = await requestCut(ctx, listing, { version, tag, commitSha: commit, trigger: 'push' });
    return cut !== undefined;
  } catch (error) {
    // The listing says why (source unreachable or public, a limit of the day); the tag stays on
    // GitHub, and sync cuts it once the creator has fixed that.
    if (!isAppError(error)) throw error;
    ctx.log.warn(
      { listingId: listing.id, tag, code: error.code, reason: error.message },
      'GitHub tag not cut',
    );
    return false;
  }
}

/** A released tag that now names another commit, or none: reported, and what was sold stays. */
async function tagMoved(
  ctx: AppContext,
  listing: Listing,
  tag: string,
  releasedCommitSha: string,
  commitSha: string | null,
): Promise<boolean> {
  const recorded = await recordTagChange(ctx.database.db, {
    listingId: listing.id,
    tag,
    releasedCommitSha,
    commitSha,
    seenAt: ctx.clock.now(),
  });
  if (recorded) {
    ctx.log.warn(
      { listingId: listing.id, tag, releasedCommitSha, commitSha },
      commitSha
        ? 'a released tag was moved on GitHub; the release keeps its commit'
        : 'a released tag was deleted on GitHub',
    );
  }
  return recorded;
}

/**
 * Whether the listing's source state is other than when `listing` was read: asking GitHub (for a
 * tag, for the repository) marks it `public`, `unreachable` or `ok` again on the way.
 */
async function stateMoved(ctx: AppContext, listing: Listing): Promise<boolean> {
  const now = await listingById(ctx.database.db, listing.id);
  return now !== undefined && now.sourceState !== listing.sourceState;
}

async function installationChanged(ctx: AppContext, installationId: number, action: string | undefined) {
  const affected = await liveGitHubListings(ctx.database.db, { installationId });
  if (action === 'deleted' || action === 'suspend') {
    // Uninstalled: installing again is the way back, whatever the listing was waiting for before.
    const marked =
      action === 'deleted'
        ? await markSourceState(ctx, affected, 'unreachable', lossReason('uninstalled'), {
            replaceReason: true,
          })
        : await markSourceState(ctx, affected, 'unreachable', lossReason('suspended'));
    return marked.some((listing) => listing.changed);
  }
  if (action === 'unsuspend') {
    // Only what the suspension took: a listing out of reach for another reason (its repository
    // removed from the installation) stays so.
    const suspended = new Set([lossReason('suspended'), lossReason('forbidden')]);
    const marked = await markSourceState(
      ctx,
      affected.filter(
        (listing) => listing.sourceState === 'unreachable' && suspended.has(listing.sourceStateReason ?? ''),
      ),
      'ok',
      null,
    );
    return marked.some((listing) => listing.changed);
  }
  return false;
}

async function repositoriesChanged(ctx: AppContext, installationId: number, payload: GitHubPayload) {
  let handled = false;
  for (const { id } of payload.repositories_removed ?? []) {
    const affected = await listingsOf(ctx, installationId, id);
    const marked = await markSourceState(ctx, affected, 'unreachable', lossReason('repo_removed'));
    handled = marked.some((listing) => listing.changed) || handled;
  }
  return (await repositoriesAdded(ctx, installationId, payload.repositories_added ?? [])) || handled;
}

/**
 * Repositories added (back) to an installation, also to a new one after the App was reinstalled
 * (`installation` `created` lists them): the listings they back are bound to that installation and
 * marked reachable. Only a repository's owner can add it to an installation.
 */
async function repositoriesAdded(ctx: AppContext, installationId: number, added: Array<{ id: number }>) {
  let handled = false;
  for (const { id } of added) {
    const affected = await liveGitHubListings(ctx.database.db, { repoId: id });
    handled = (await rebindInstallation(ctx, affected, installationId)) || handled;
  }
  return handled;
}

/**
 * A repository made public or private (or otherwise changed): the payload is not taken on trust;
 * GitHub is asked afresh, which marks each listing it backs `public`, `ok` or `unreachable`.
 */
async function repositoryChanged(ctx: AppContext, installationId: number, repoId: number) {
  let handled = false;
  for (const listing of await listingsOf(ctx, installationId, repoId)) {
    await reachableSource(ctx, listing).catch((error: unknown) => {
      if (!isSourceRefusal(error)) throw error;
    });
    handled = (await stateMoved(ctx, listing)) || handled;
  }
  return handled;
}
