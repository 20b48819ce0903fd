import { api } from '../api.js';
import { useLoad } from '../use-load.js';
import { CopyBlock } from './copy.js';
import { ErrorNotice } from './error-notice.js';
import { FieldError, type FormErrors } from './form-errors.js';

/** `GET /api/github/repositories`: the repositories that claim the signed-in creator, by installation. */
export interface GitHubRepositories {
  enabled: boolean;
  install_url: string | null;
  claim: { file: string; line: string };
  installations: Array<{
    installation_id: number;
    account: string;
    repositories: GitHubRepository[];
  }>;
  truncated: boolean;
}

export interface GitHubRepository {
  github_repo_id: number;
  full_name: string;
  private: boolean;
  default_branch: string;
  listing_id: string | null;
  in_use: boolean;
}

export interface GitHubChoice {
  installationId: number;
  repository: GitHubRepository;
}

/**
 * The GitHub half of a new listing: whether the operator enabled it, how to install the App and
 * claim a repository with `.repo402`, then the claimed repositories to choose from, each saying
 * why it cannot be chosen when it cannot.
 */
export function GitHubRepoPicker({
  chosen,
  onChoose,
  form,
}: {
  chosen: GitHubChoice | undefined;
  onChoose: (choice: GitHubChoice | undefined) => void;
  form: FormErrors;
}) {
  const found = useLoad(() => api<GitHubRepositories>('GET', '/github/repositories'), 'github-repositories');
  if (!found.data) return found.error ? <ErrorNotice error={found.error} /> : <p>Looking on GitHub…</p>;
  const { data } = found;
  if (!data.enabled) {
    return (
      <p class="notice warn" id="github-disabled">
        The operator of this service has not enabled GitHub listings (they register a GitHub App for it
        first). Choose “Hosted here” above to push your code over SSH instead, or ask the operator.
      </p>
    );
  }
  const claimCommand = `printf '%s\\n' ${data.claim.line} > ${data.claim.file}\ngit add ${data.claim.file} && git commit -m "Claim for repo402" && git push`;
  return (
    <div id="github-source">
      <ol class="steps">
        <li>
          <a href={data.install_url ?? undefined} target="_blank" rel="noopener">
            Install the repo402 GitHub App
          </a>{' '}
          on your GitHub account or organisation, and give it the repository you sell. It only reads.
        </li>
        <li>
          Prove the repository is yours: commit a file named <code>{data.claim.file}</code> holding your
          handle, <code>{data.claim.line}</code>, on a line of its own, to its default branch. For example:
          <CopyBlock text={claimCommand} label="claim commands" />
          The file ships in buyers' zips; it says nothing but your handle.
        </li>
        <li>
          Choose it below (keep it private on GitHub: a public repository cannot be sold). Committed the file
          or installed the App just now? Look again:
          <p>
            <button type="button" class="secondary" onClick={() => void found.reload()}>
              Check again
            </button>
          </p>
        </li>
      </ol>
      <fieldset {...form.inputProps('github-repo')} id="github-repo" tabIndex={-1}>
        <legend>Repository</legend>
        {data.installations.length === 0 ? (
          <p class="muted" id="github-none">
            No repository that the App can read claims <code>{data.claim.line}</code> yet. Install the App on
            it, commit <code>{data.claim.file}</code>, then check again.
          </p>
        ) : (
          data.installations.map((installation) => (
            <div key={installation.installation_id} class="installation">
              <p class="small">
                Installed on <strong>{installation.account}</strong>
              </p>
              {installation.repositories.map((repository) => (
                <RepositoryChoice
                  key={repository.github_repo_id}
                  repository={repository}
                  checked={chosen?.repository.github_repo_id === repository.github_repo_id}
                  choose={() => {
                    form.edited('github-repo');
                    onChoose({ installationId: installation.installation_id, repository });
                  }}
                />
              ))}
            </div>
          ))
        )}
        {data.truncated ? (
          <p class="muted small">
            The App reaches more repositories than are looked at in one go; if yours is missing, ask the
            operator.
          </p>
        ) : null}
      </fieldset>
      <FieldError form={form} id="github-repo" />
    </div>
  );
}

function RepositoryChoice({
  repository,
  checked,
  choose,
}: {
  repository: GitHubRepository;
  checked: boolean;
  choose: () => void;
}) {
  const why = unavailable(repository);
  const id = `github-repo-${repository.github_repo_id}`;
  return (
    <label class="check" for={id}>
      <input
        id={id}
        type="radio"
        name="github-repo"
        disabled={why !== undefined}
        checked={checked}
        onChange={choose}
      />{' '}
      <code>{repository.full_name}</code>
      {why ? (
        <span class="muted small">
          {' '}
          · {why}
          {repository.listing_id ? (
            <>
              {' '}
              (<a href={`/app/listings/${repository.listing_id}`}>open it</a>)
            </>
          ) : null}
        </span>
      ) : null}
    </label>
  );
}

function unavailable(repository: GitHubRepository): string | undefined {
  if (repository.listing_id) return 'already one of your listings';
  if (repository.in_use) return 'already listed by someone else';
  if (!repository.private) return 'public on GitHub: make it private first';
  return undefined;
}
