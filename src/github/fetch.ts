import type { GitHubAppConfig } from '../config.js';
import { GitError, runGit } from '../git/run-git.js';

/**
 * Shallow fetches from GitHub into a listing's local mirror, under the same fixed git environment
 * every git of ours runs in. The installation token travels only as an HTTP header set through
 * `GIT_CONFIG_*` environment variables: never in the URL, the argv (visible in `ps`) or a file.
 */

export interface FetchSource {
  cloneUrl: string;
  token: string;
}

/** Fetches one commit (depth 1) and, when it still names that commit, its release tag. */
export async function fetchTaggedCommit(
  config: GitHubAppConfig,
  gitDir: string,
  source: FetchSource,
  release: { commitSha: string; tag: string },
): Promise<void> {
  const url = checkedCloneUrl(config, source.cloneUrl);
  const env = fetchEnv(config, source.token);
  const present = await runGit(['cat-file', '-e', `${release.commitSha}^{commit}`], { gitDir }).then(
    () => true,
    () => false,
  );
  if (!present) {
    await runGit(
      ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--depth=1', url, release.commitSha],
      {
        gitDir,
        env,
      },
    );
  }
  // The tag object carries the changelog (an annotated tag's message). A tag moved or deleted since
  // the cut was claimed is not followed: the local tag names the claimed commit.
  const remoteTag = `refs/github-tags/${release.tag}`;
  const fetchedTag = await runGit(
    [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--depth=1',
      url,
      `+refs/tags/${release.tag}:${remoteTag}`,
    ],
    { gitDir, env },
  ).then(
    () => true,
    (error: unknown) => {
      if (error instanceof GitError) return false;
      throw error;
    },
  );
  const peeled = fetchedTag
    ? (await runGit(['rev-parse', `${remoteTag}^{commit}`], { gitDir })).trim()
    : undefined;
  const target = peeled === release.commitSha ? remoteTag : release.commitSha;
  await runGit(['update-ref', `refs/tags/${release.tag}`, target], { gitDir });
  if (fetchedTag) await runGit(['update-ref', '-d', remoteTag], { gitDir });
}

/** Only https (http when allowed for a local stand-in), and no credentials in the URL itself. */
function checkedCloneUrl(config: GitHubAppConfig, cloneUrl: string): string {
  const url = new URL(cloneUrl);
  const allowed = config.allowHttpGit ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol) || url.username || url.password) {
    throw new Error(`refusing to fetch from ${url.protocol}//${url.host}: not an https clone URL`);
  }
  return url.href;
}

function fetchEnv(config: GitHubAppConfig, token: string): Record<string, string> {
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return {
    GIT_ALLOW_PROTOCOL: config.allowHttpGit ? 'https:http' : 'https',
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    GIT_CONFIG_KEY_1: 'protocol.version',
    GIT_CONFIG_VALUE_1: '2',
  };
}
