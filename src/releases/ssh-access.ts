import type { AppContext } from '../context.js';
import type { SshAccess } from '../git/ssh-server.js';
import { isValidName } from '../identity/handles.js';
import { isKnownDeployKey, listingForDeployKey } from '../listings/deploy-keys.js';
import { cutPushedTags } from './cut/claims.js';
import { pushAllowance } from './cut/limits.js';
import { PRE_RECEIVE, pushHookEnv } from './pre-receive.js';

const NO_SUCH_REPOSITORY = 'no such repository, or this key may not use it';

/**
 * The SSH server's rules for hosted listings: a listing's live deploy key may fetch from and push
 * to its repository, a retired or suspended listing's repository is read-only, a push is checked against the
 * release limits by the pre-receive hook, and after it new `vX.Y.Z` tags are claimed and their
 * cuts queued.
 */
export function hostedRepoAccess(ctx: AppContext): SshAccess {
  const db = ctx.database.db;
  return {
    hooks: { 'pre-receive': PRE_RECEIVE },
    isKnownKey: (fingerprint) => isKnownDeployKey(db, fingerprint),
    async open({ fingerprint, owner, slug, service }) {
      if (!isValidName(owner) || !isValidName(slug)) return { refused: NO_SUCH_REPOSITORY };
      const listing = await listingForDeployKey(db, fingerprint, owner, slug);
      if (!listing) return { refused: NO_SUCH_REPOSITORY };
      if (service === 'upload-pack') return { hookEnv: {}, afterPush: async () => [] };
      if (listing.status === 'retired') {
        return { refused: 'this listing is retired; its repository is archived read-only' };
      }
      if (listing.suspendedAt) {
        const whose =
          listing.suspendedBy === 'creator' ? `its creator ${listing.owner} is` : 'this listing is';
        return {
          refused: `${whose} suspended by the operator of this service (${listing.suspensionReason ?? ''}); pushes are refused until the suspension is lifted`,
        };
      }
      return {
        hookEnv: pushHookEnv(await pushAllowance(db, ctx.config, listing, ctx.clock.now())),
        afterPush: (gitDir) =>
          cutPushedTags(ctx, listing, gitDir).catch((error: unknown) => {
            ctx.log.error({ err: error, listing: listing.id }, 'could not queue cuts after a push');
            return ['tags received; queueing their releases failed, run POST /api/listings/{id}/sync'];
          }),
      };
    },
  };
}
