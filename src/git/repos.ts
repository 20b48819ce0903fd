import { chmod, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { TAG_PATTERN } from '../releases/versions.js';
import { runGit } from './run-git.js';

/**
 * Hosted (Rail B) repositories: bare repositories under DATA_DIR/repos/<owner>/<slug>.git, served
 * by the SSH server and read by the release cut. They are never deleted: retiring a listing
 * archives its repository read-only.
 */

export const DEFAULT_BRANCH = 'main';
/** Largest pack one push may send; pushes are compressed, the unpacked tree limit is the release cut's. */
export const MAX_PUSH_BYTES = 512 * 1024 * 1024;

export function reposRoot(config: Config): string {
  return path.join(config.dataDir, 'repos');
}

export function repoPath(config: Config, owner: string, slug: string): string {
  return path.join(reposRoot(config), owner, `${slug}.git`);
}

export function hooksDir(config: Config): string {
  return path.join(config.dataDir, 'git-hooks');
}

export function remoteUrl(config: Config, owner: string, slug: string): string {
  return `ssh://git@${config.ssh.publicHost}:${config.sshPort}/${owner}/${slug}.git`;
}

/**
 * What a push may add, computed by the SSH server before it runs `git-receive-pack` and handed to
 * the pre-receive hook through its environment (the hook cannot reach the database). Advisory: a
 * concurrent push may take the same allowance, so the claims after the push decide for good.
 */
export interface PushAllowance {
  tagsPerPush: number;
  releasesLeftToday: number;
  releasesPerDay: number;
  /** ISO time the UTC day ends, when the releases left reset. */
  dayEndsAt: string;
  storedBytes: number;
  maxStoredBytes: number;
}

/** The hook's environment for `allowance`. */
export function pushHookEnv(allowance: PushAllowance): Record<string, string> {
  return {
    REPO402_TAGS_PER_PUSH: String(allowance.tagsPerPush),
    REPO402_RELEASES_LEFT: String(allowance.releasesLeftToday),
    REPO402_RELEASES_PER_DAY: String(allowance.releasesPerDay),
    REPO402_DAY_ENDS_AT: allowance.dayEndsAt,
    REPO402_STORED_BYTES: String(allowance.storedBytes),
    REPO402_MAX_STORED_BYTES: String(allowance.maxStoredBytes),
  };
}

/**
 * Refuses, before any ref changes, a push that moves or deletes a release tag, or that adds one
 * the release cut could never use: a `vX.Y.Z`-like name outside the version rules (leading zeros,
 * a part over nine digits) or a release tag that does not point at a commit (through any number
 * of annotated tags). Other `v*` tags are kept and cut nothing. Then, with the allowance the SSH
 * server passed (`pushHookEnv`), a push adding more release tags than one push may, than the
 * listing may still cut today, or any once the creator's stored zips are at their limit, is
 * refused whole. git prints what the hook writes to stderr as `remote: …` lines on the pusher's
 * terminal.
 */
const PRE_RECEIVE = `#!/bin/sh
# repo402: release tags (v*) are immutable once pushed, and a new one must be a usable release.
status=0
new_releases=0
while read -r old new ref; do
  case "$ref" in
    refs/tags/v*)
      tag="\${ref#refs/tags/}"
      case "$old" in
        *[!0]*)
          case "$new" in
            *[!0]*) echo "repo402: tag $tag already exists and cannot be moved: release tags are immutable. Tag a new version instead." >&2 ;;
            *) echo "repo402: tag $tag cannot be deleted: release tags are immutable." >&2 ;;
          esac
          status=1
          continue
          ;;
      esac
      if printf '%s' "$tag" | grep -Eq '${TAG_PATTERN.source}'; then
        if git rev-parse --verify --quiet "$new^{commit}" >/dev/null; then
          new_releases=$((new_releases + 1))
        else
          echo "repo402: release tag $tag must point at a commit." >&2
          status=1
        fi
      elif printf '%s' "$tag" | grep -Eq '^v[0-9]+[.][0-9]+[.][0-9]+$'; then
        echo "repo402: tag $tag is not a release version: vX.Y.Z, each part 0 to 999999999 without leading zeros." >&2
        status=1
      fi
      ;;
  esac
done
if [ "$status" -eq 0 ] && [ "$new_releases" -gt 0 ] && [ -n "$REPO402_TAGS_PER_PUSH" ]; then
  if [ "$new_releases" -gt "$REPO402_TAGS_PER_PUSH" ]; then
    echo "repo402: this push adds $new_releases release tags; one push may add at most $REPO402_TAGS_PER_PUSH. Push them in smaller batches." >&2
    status=1
  elif [ "$REPO402_STORED_BYTES" -ge "$REPO402_MAX_STORED_BYTES" ]; then
    echo "repo402: your releases already store $REPO402_STORED_BYTES bytes of zips, the limit of $REPO402_MAX_STORED_BYTES per creator: no new release can be cut." >&2
    status=1
  elif [ "$new_releases" -gt "$REPO402_RELEASES_LEFT" ]; then
    echo "repo402: this push adds $new_releases release tags, but this listing may cut only $REPO402_RELEASES_LEFT more releases today (at most $REPO402_RELEASES_PER_DAY per UTC day). Push the rest after $REPO402_DAY_ENDS_AT." >&2
    status=1
  fi
fi
exit $status
`;

/** Writes the shared hooks directory; every git we run for pushes uses it through core.hooksPath. */
export async function installHooks(config: Config): Promise<string> {
  const dir = hooksDir(config);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'pre-receive');
  await writeFile(file, PRE_RECEIVE, { mode: 0o755 });
  await chmod(file, 0o755);
  return dir;
}

/**
 * Creates the bare repository with `main` as its default branch. Non-fast-forward pushes are
 * refused, so a commit the service made (a LICENSE) is never overwritten by a push: the creator
 * pulls first. Idempotent, so a retried creation reuses a directory a failed attempt left.
 */
export async function provisionRepo(config: Config, owner: string, slug: string): Promise<string> {
  const dir = repoPath(config, owner, slug);
  await mkdir(dir, { recursive: true });
  await runGit(['init', '--quiet', '--bare', `--initial-branch=${DEFAULT_BRANCH}`, dir]);
  for (const [key, value] of [
    ['receive.denyNonFastForwards', 'true'],
    ['receive.denyDeletes', 'false'],
    ['receive.maxInputSize', String(MAX_PUSH_BYTES)],
    ['receive.fsckObjects', 'true'],
    ['core.logAllRefUpdates', 'true'],
  ] as const) {
    await runGit(['config', key, value], { gitDir: dir });
  }
  await rm(path.join(dir, 'hooks'), { recursive: true, force: true });
  return dir;
}

export async function repoExists(config: Config, owner: string, slug: string): Promise<boolean> {
  return stat(path.join(repoPath(config, owner, slug), 'HEAD')).then(
    () => true,
    () => false,
  );
}
