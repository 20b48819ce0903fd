import { GitHubAccessError, type GitHubClient, type GitHubRepo } from '../github/client.js';

/**
 * The claim that ties a GitHub repository to a repo402 handle: a file on the repository's default
 * branch naming the handle on a line of its own. An installation id is no secret (it shows in
 * GitHub's URLs), so reaching a repository through the App proves nothing about who is asking;
 * writing to it does. Listing creation and the repository list both decide with this code.
 */

/** The file on a repository's default branch that names the repo402 handles allowed to list it. */
export const CLAIM_FILE = '.repo402';

/** The claim file's text on the repository's default branch; undefined when it has none. */
export function readClaimFile(
  client: GitHubClient,
  installationId: number,
  repo: Pick<GitHubRepo, 'fullName'>,
): Promise<string | undefined> {
  return client.fileText(installationId, repo, CLAIM_FILE);
}

/** Whether the claim file's text names `handle` on a line of its own (case and surrounding spaces aside). */
export function claimNames(text: string | undefined, handle: string): boolean {
  const wanted = handle.toLowerCase();
  return text?.split(/\r?\n/).some((line) => line.trim().toLowerCase() === wanted) ?? false;
}

/** A call the installation can no longer make reads as nothing found; any other failure stays one. */
export function noAccess(error: unknown): undefined {
  if (error instanceof GitHubAccessError) return undefined;
  throw error;
}
