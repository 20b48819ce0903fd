import { RELEASE_TAG_FORM, TAG_PATTERN } from '../platform/versions.js';

/**
 * What a push may add (`pushAllowance`), computed before the SSH server runs `git-receive-pack` and
 * handed to the pre-receive hook through its environment (the hook cannot reach the database).
 * Advisory: a concurrent push may take the same allowance, so the claims after the push decide.
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
 * Refuses, before any ref changes, a push that moves or deletes a release tag (`TAG_PATTERN`), or
 * that adds one the cut could never use: one that does not point at a commit (through any number
 * of annotated tags). A `v` and a digit start a release tag alone: any other such tag (`v1.2`,
 * `v1.4.0-beta`, `v01.2.3`) looks like a release but would cut nothing, so it is refused with what
 * a release tag looks like; one pushed before that rule may still be deleted. Other tags (`vnext`,
 * `stable`) are the creator's own, never checked. Then, with the allowance the SSH server passed
 * (`pushHookEnv`), a push adding more release tags than one push may, than the listing may still
 * cut today, or any once the creator's stored zips are at their limit, is refused whole. git
 * prints what the hook writes to stderr as `remote: …` lines on the pusher's terminal.
 */
export const PRE_RECEIVE = `#!/bin/sh
# repo402: v<digit>* tags are release tags, immutable once pushed, and a new one must be a usable release.
status=0
new_releases=0
while read -r old new ref; do
  case "$ref" in
    refs/tags/v[0-9]*)
      tag="\${ref#refs/tags/}"
      if ! printf '%s' "$tag" | grep -Eq '${TAG_PATTERN.source}'; then
        case "$new" in
          *[!0]*)
            echo "repo402: tag $tag is not a release tag: release tags look like ${RELEASE_TAG_FORM}. Name other tags without a v and a digit at the start." >&2
            status=1
            ;;
        esac
        continue
      fi
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
      if git rev-parse --verify --quiet "$new^{commit}" >/dev/null 2>&1; then
        new_releases=$((new_releases + 1))
      else
        echo "repo402: release tag $tag must point at a commit." >&2
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
