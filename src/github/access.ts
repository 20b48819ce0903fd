/**
 * Why the GitHub App cannot reach a listing's repository, and what the creator does about it. A
 * listing records the reason as text (`github.reason`); every reason the service records comes
 * from this table, so the advice given with a refusal always fits the recorded cause.
 */

export type AccessLoss =
  /** `installation` `deleted`. */
  | 'uninstalled'
  /** `installation` `suspend`. */
  | 'suspended'
  /** `installation_repositories` `removed`. */
  | 'repo_removed'
  /** GitHub answered 404 for the installation's token: the App is not installed (any more). */
  | 'not_installed'
  /** GitHub answered 403 for the installation: suspended, or a permission it needs is missing. */
  | 'forbidden'
  /** GitHub answered 401 for the installation's token. */
  | 'refused'
  /** The installation works but does not see the repository (removed from it, or deleted). */
  | 'repo_unreached'
  /** This server has no App configured any more. */
  | 'no_app';

const SETTINGS = 'the installation’s settings on GitHub (Installed GitHub Apps → Configure)';
const INSTALL_AGAIN =
  'Install the GitHub App on the repository again (the listing moves to the new installation), then sync';
const ADD_BACK = `Add the repository back to the GitHub App installation (Repository access, in ${SETTINGS}), then sync`;

const LOSSES: Record<AccessLoss, { reason: string; remedy: string }> = {
  uninstalled: { reason: 'the GitHub App was uninstalled', remedy: INSTALL_AGAIN },
  suspended: {
    reason: 'the GitHub App installation was suspended',
    remedy: `Unsuspend the GitHub App installation in ${SETTINGS}, then sync`,
  },
  repo_removed: { reason: 'the repository was removed from the GitHub App installation', remedy: ADD_BACK },
  not_installed: { reason: 'the GitHub App is not installed (or was uninstalled)', remedy: INSTALL_AGAIN },
  forbidden: {
    reason: 'the GitHub App installation is suspended or lacks the permission',
    remedy: `Unsuspend the GitHub App installation, or accept the permissions it asks for, in ${SETTINGS}, then sync`,
  },
  refused: {
    reason: 'GitHub refused the App installation',
    remedy:
      'Check that the GitHub App is still installed on the repository (install it again if not), then sync',
  },
  repo_unreached: {
    reason: 'the GitHub App installation no longer reaches the repository',
    remedy: ADD_BACK,
  },
  no_app: {
    reason: 'this server no longer has a GitHub App configured',
    remedy: 'The operator has to configure the GitHub App again; sync once they have',
  },
};

export function lossReason(loss: AccessLoss): string {
  return LOSSES[loss].reason;
}

/** What to do about a recorded reason; a reason from elsewhere gets the general advice. */
export function remedyFor(reason: string): string {
  return (
    Object.values(LOSSES).find((loss) => loss.reason === reason)?.remedy ??
    'Make sure the GitHub App is installed on the repository and the installation is active, then sync'
  );
}
