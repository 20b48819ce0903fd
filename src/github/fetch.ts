import type { GitHubAppConfig } from '../config.js';
import { resolveCommit } from '../git/refs.js';
import { runGit } from '../git/run-git.js';

/**
 * Shallow fetches from GitHub into a listing's local mirror, under the same fixed git environment
 * every git of ours runs in. The installation token travels only as an HTTP header set through
 * `GIT_CONFIG_*` environment variables: never in the URL, the argv (visible in `ps`) or a file.
 */

export interface FetchSource {
  cloneUrl: string;
  token: string;
}

/**
 * Brings the claimed commit (depth 1) into the mirror and makes the local release tag name it.
 * While GitHub's tag still names that commit (`tagNamesCommit`, asked through the API), one fetch
 * of the tag brings both, and the annotated tag's message becomes the changelog. A tag moved or
 * deleted since the claim is not fetched (its tree was never size-checked): the commit is fetched
 * by id and the local tag is a plain one.
 */
export async function fetchTaggedCommit(
  config: GitHubAppConfig,
  gitDir: string,
  source: FetchSource,
  release: { commitSha: string; tag: string; tagNamesCommit: boolean },
): Promise<void> {
  const url = checkedCloneUrl(config, source.cloneUrl);
  const fetch = (refspec: string) =>
    runGit(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--depth=1', url, refspec], {
      gitDir,
      env: fetchEnv(config, source.token),
    });
  const localTag = `refs/tags/${release.tag}`;
  if (release.tagNamesCommit) {
    const fetchedTag = `refs/github-tags/${release.tag}`;
    await fetch(`+${localTag}:${fetchedTag}`);
    // Checked again: the tag may have moved between GitHub's answer and the fetch.
    const named = (await resolveCommit(gitDir, fetchedTag)) === release.commitSha;
    if (named) await runGit(['update-ref', localTag, fetchedTag], { gitDir });
    await runGit(['update-ref', '-d', fetchedTag], { gitDir });
    if (named) return;
  }
  if (!(await resolveCommit(gitDir, release.commitSha))) await fetch(release.commitSha);
  await runGit(['update-ref', localTag, release.commitSha], { gitDir });
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
