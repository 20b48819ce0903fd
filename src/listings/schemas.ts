import { z } from 'zod';
import { NAME_MAX_LENGTH, NAME_MIN_LENGTH, NAME_PATTERN, NAME_RULE } from '../identity/handles.js';
import { MicroUsdc, MicroUsdcInput } from '../platform/money/money.js';
import { multiLineText, singleLineText } from '../platform/text-fields.js';
import { scanHiddenUnicode } from '../scan/hidden-unicode.js';
import { CUT_STAGES } from './cut-stages.js';
import { LICENCES } from './data/licence-texts.js';

/*
 * SPEC.md's Release object. Declared here, with the listing that shows its releases, because
 * listings/ sits below releases/ (releases/ may import listings/, never the reverse); the release
 * log and the update 402 show the same object, filled by `releaseBody` (releases/views.ts).
 */
export const DiffSummarySchema = z
  .object({
    files_added: z.number().int(),
    files_changed: z.number().int(),
    files_removed: z.number().int(),
    additions: z.number().int(),
    deletions: z.number().int(),
    components_touched: z.array(z.string()),
  })
  .meta({ id: 'DiffSummary', description: 'Changes since the previous release (everything, for the first)' });

/** A blocking dependency finding of `known_vulns` or `known_malware`, as the scan report writes it. */
const AdvisoryFindingSchema = z.object({
  kind: z.enum(['vulnerability', 'malware']),
  check: z.enum(['known_vulns', 'known_malware']),
  tier: z.literal('blocking'),
  rule_id: z.string().meta({ description: 'The OSV id (GHSA-…, CVE-…, MAL-…)' }),
  severity: z.enum(['HIGH', 'CRITICAL']),
  description: z.string(),
  path: z.string().optional().meta({ description: 'The manifest or lockfile naming the dependency' }),
  package: z
    .object({
      ecosystem: z.string(),
      name: z.string(),
      version: z.string().nullable().optional(),
      direct: z.boolean(),
      dev: z.boolean(),
    })
    .optional(),
  source: z.string().optional().meta({ description: '`osv:<id>`' }),
});

export const AdvisoryFlagSchema = z
  .object({
    flagged_at: z.iso.datetime().meta({ description: 'When the release was flagged with these advisories' }),
    advisory_ids: z.array(z.string()),
    findings: z.array(AdvisoryFindingSchema),
  })
  .meta({
    id: 'AdvisoryFlag',
    description:
      "Advisory data that arrived after the release's scan matches its dependencies with a HIGH or CRITICAL vulnerability or a malicious package (what would have failed the scan). The scan verdict stays as it was; absent when nothing matches. See docs/SCANNING.md",
  });

export const YankSchema = z
  .object({
    yanked_at: z.iso.datetime().meta({ description: 'When the operator yanked the release' }),
    reason: z.string().meta({ description: "The operator's reason, as given" }),
  })
  .meta({
    id: 'Yank',
    description:
      'The operator yanked this release: it is neither sold nor served (its download and re-fetch answer `410 release_yanked`); it stays in the log and its attestation still verifies. A holder of it is granted the newest passing release free by GET /api/r/{owner}/{slug}. Absent when not yanked',
  });

export const CutStageSchema = z
  .object({
    name: z.enum(CUT_STAGES).meta({
      description:
        '`snapshot`: the tagged commit is being zipped; `analysis`: every file is being read and analysed; `scan`: dependencies are being checked against advisories and the files against other listings; `attestation`: the verdict is being signed and recorded. Only moves forward',
    }),
    entered_at: z.iso.datetime().meta({ description: 'When the cut entered this stage' }),
  })
  .meta({
    id: 'CutStage',
    description:
      'How far the cut of a release still in progress has got (an addition to SPEC.md; docs/RELEASES.md). Absent once the release has its verdict, and on cuts made before stages were recorded',
  });

export const ReleaseSchema = z
  .object({
    version: z.string().meta({ examples: ['1.2.0'] }),
    tag: z.string().meta({ examples: ['v1.2.0'] }),
    commit_sha: z.string().meta({ description: '40 hex characters' }),
    artifact_sha256: z.string().nullable().meta({
      description:
        'SHA-256 of the zip bytes, 64 hex characters; null only on a release refused for a size limit before any zip was made (its `scan` is `fail`; it is never sold)',
    }),
    published_at: z.iso.datetime(),
    changelog: z.string(),
    diff_summary: DiffSummarySchema.nullable(),
    scan: z.enum(['pending', 'pass', 'fail']).meta({
      description: '`pass` is the passing verdict; `pending` until inspection finishes; terminal once set',
    }),
    scanner_version: z.string().nullable(),
    analyzer_version: z.string().nullable(),
    price_micro: MicroUsdc.nullable().meta({
      description:
        'The listing’s price in force now, the same on every release of the log: only the newest passing release is sold, at this price; null only on a draft not yet priced',
    }),
    update_price_micro: MicroUsdc.meta({
      description: 'The listing’s update price in force now, the same on every release of the log',
    }),
    on_sale: z.boolean().optional().meta({
      description:
        'In the release log: whether this is the one version sold (the newest passing release of a published listing); an older version cannot be bought',
    }),
    first_on_sale: z
      .object({
        at: z.iso.datetime(),
        price_micro: MicroUsdc,
        update_price_micro: MicroUsdc,
      })
      .optional()
      .meta({
        description:
          'When this release first went on sale (became the newest passing release of the published listing) and the prices then; absent for a release never sold',
      }),
    advisory_flag: AdvisoryFlagSchema.optional(),
    yanked: YankSchema.optional(),
    attestation_url: z.string().optional().meta({
      description:
        'The release’s signed attestation (in-toto Statement v1 in a DSSE envelope); on the release log and the manifest page once the verdict is recorded',
    }),
    stage: CutStageSchema.optional().meta({
      description: 'While `scan` is `pending`: the stage its cut has reached. Absent otherwise',
    }),
  })
  .meta({ id: 'Release' });

export const SlugSchema = z
  .string()
  .min(NAME_MIN_LENGTH, `at least ${NAME_MIN_LENGTH} characters`)
  .max(NAME_MAX_LENGTH, `at most ${NAME_MAX_LENGTH} characters`)
  .regex(NAME_PATTERN, NAME_RULE)
  .meta({ description: `The listing's name in URLs, unique per owner: ${NAME_RULE}; 3–39 characters` });

// Several lines only so that a pasted key keeps its trailing newline; the parser refuses any other break.
const SshPublicKeySchema = multiLineText()
  .max(16_384)
  .meta({
    description:
      'OpenSSH public key line: ssh-ed25519, ecdsa-sha2-nistp256/384/521, or ssh-rsa of 2048 bits or more',
    examples: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL0… me@laptop'],
  });

/**
 * Self-reported text is shown to buyers and read by their agents, so it may not hide anything
 * from the people reviewing it: the hidden Unicode a release's scan blocks in a text file (bidi
 * controls, tag characters, runs of zero-width characters or variation selectors) is refused
 * here by the same rules. Text in right-to-left scripts, emoji sequences and single joiners pass.
 */
function selfReportedText(maxLength: number) {
  return multiLineText()
    .max(maxLength)
    .refine((value) => value.trim().length > 0, 'must not be empty')
    .superRefine((value, ctx) => {
      const hidden = scanHiddenUnicode('', value).find((finding) => finding.tier === 'blocking');
      if (hidden)
        ctx.addIssue({ code: 'custom', message: `hidden Unicode: ${hidden.description}`, input: value });
    });
}

export const DescriptionSchema = selfReportedText(5000).meta({
  description: 'What the repository is, for buyers (self-reported)',
});
export const TriggerHintSchema = selfReportedText(1000).meta({
  description: 'When an agent should reach for it (self-reported)',
});

const optionalListingFields = {
  price_micro: MicroUsdcInput.optional().meta({
    description: 'Price of a first purchase; "0" is a free listing',
  }),
  update_price_micro: MicroUsdcInput.optional().meta({
    description: 'Price of an update for a holder of an earlier version; "0" (the default) includes updates',
  }),
  description: DescriptionSchema.optional(),
  trigger_hint: TriggerHintSchema.optional(),
};

export const CreateListingRequestSchema = z
  .discriminatedUnion('source', [
    z.strictObject({
      source: z.literal('hosted'),
      slug: SlugSchema,
      ssh_public_key: SshPublicKeySchema,
      ...optionalListingFields,
    }),
    z.strictObject({
      source: z.literal('github'),
      slug: SlugSchema,
      installation_id: z.number().int().positive(),
      github_repo_id: z.number().int().positive().optional(),
      repo: z
        .string()
        .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/name')
        .optional(),
      ...optionalListingFields,
    }),
  ])
  .meta({ id: 'CreateListingRequest' });

export const UpdateListingRequestSchema = z
  .strictObject(optionalListingFields)
  .refine(
    (body) => Object.values(body).some((value) => value !== undefined),
    'give at least one field to change',
  )
  .meta({ id: 'UpdateListingRequest' });

export const SshKeyRequestSchema = z
  .strictObject({ ssh_public_key: SshPublicKeySchema })
  .meta({ id: 'SshKeyRequest' });

export const ListingIdParamsSchema = z.strictObject({ id: z.uuid('expected a UUID') });

export const ListQuerySchema = z.strictObject({
  cursor: singleLineText()
    .max(512)
    .optional()
    .meta({ description: 'Opaque; the `next_cursor` of the previous page' }),
  limit: z
    .string()
    .regex(/^(100|[1-9][0-9]?)$/, 'an integer from 1 to 100')
    .optional()
    .meta({ description: 'Page size, 1–100 (default 50)' }),
});

export const PricingSchema = z
  .object({
    price_micro: MicroUsdc.nullable().meta({ description: 'null until a price is set; "0" is free' }),
    update_price_micro: MicroUsdc,
  })
  .meta({ id: 'Pricing' });

export const HostKeySchema = z.object({
  type: z.string(),
  sha256: z.string().meta({ examples: ['SHA256:…'] }),
});

export const ListingReleaseSchema = ReleaseSchema.extend({
  scan_report: z.unknown().optional().meta({
    description:
      "The full trust report (null while pending): verdict, checks, findings with path and line, and `notes` naming each documented example or placeholder credential the secret check allowed (never blocking, never counted). Only on the creator's single-listing answers (GET /api/listings/{id}) and GET /api/listings/{id}/releases, never on the list",
  }),
}).meta({ id: 'ListingRelease' });

/** A version claimed for a cut that has not become a release (yet). */
export const ListingCutSchema = z.object({
  version: z.string(),
  tag: z.string(),
  commit_sha: z.string(),
  trigger: z.enum(['push', 'sync']),
  state: z.enum(['queued', 'failed']),
  failure_reason: z.string().nullable(),
  requested_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
  stage: CutStageSchema.optional().meta({
    description:
      'A queued cut whose job has started: its stage (`snapshot` until its release is recorded, which then carries the stage). Absent while it waits for its job, and on a failed cut',
  }),
});

/** A release tag that GitHub now points elsewhere (or nowhere); the release keeps its commit. */
export const TagChangeSchema = z.object({
  tag: z.string(),
  released_commit_sha: z.string().meta({ description: 'The commit the release was cut from, and still is' }),
  commit_sha: z.string().nullable().meta({ description: 'Where the tag points now; null once deleted' }),
  seen_at: z.iso.datetime(),
});

export const GitHubSourceSchema = z.object({
  installation_id: z.number().int(),
  repo_id: z.number().int(),
  repo: z.string().meta({ description: 'owner/name on GitHub' }),
  state: z.enum(['ok', 'unreachable', 'public']).meta({
    description:
      '`unreachable`: the App lost access (uninstalled, suspended, repository removed); `public`: the repository was made public. Either way no new release can be cut; what was cut stays on sale and downloadable',
  }),
  reason: z.string().nullable(),
  state_changed_at: z.iso.datetime().nullable(),
  tag_changes: z.array(TagChangeSchema).optional().meta({
    description:
      'Single-listing answers: released tags moved or deleted on GitHub since, newest first (at most 50)',
  }),
});

export const ListingSchema = z
  .object({
    id: z.uuid(),
    owner: z.string(),
    slug: z.string(),
    source: z.enum(['hosted', 'github']),
    status: z.enum(['draft', 'published', 'retired']),
    pricing: PricingSchema,
    description: z.string(),
    trigger_hint: z.string(),
    licence: z.string().nullable().meta({
      description:
        'SPDX id committed through the licence route; else the licence the analysis found (computed.licence, matched or declared) in the release on sale, or the newest one before any passes; else null',
    }),
    created_at: z.iso.datetime(),
    published_at: z.iso.datetime().nullable(),
    retired_at: z.iso.datetime().nullable(),
    remote: z.string().optional().meta({ description: 'Hosted listings: the git remote to push to' }),
    default_branch: z.string().optional(),
    host_key_fingerprints: z.array(HostKeySchema).optional().meta({
      description:
        "The SSH server's host keys: compare with `ssh-keyscan -p <port> <host> | ssh-keygen -lf -` before the first push; /docs/selling shows the known_hosts lines to add",
    }),
    deploy_key_fingerprint: z.string().nullable().optional(),
    github: GitHubSourceSchema.optional().meta({
      description: 'GitHub listings: the repository and whether new releases can be cut from it',
    }),
    cuts: z.array(ListingCutSchema).optional().meta({
      description:
        'Single-listing answers: versions claimed but not (yet) released, newest first; a failed one says why (a release refused for a limit is not here: it is a failing release with its report)',
    }),
    latest_release: ListingReleaseSchema.nullable().meta({
      description: 'The newest release whose scan is `pass`',
    }),
    newest_release: ListingReleaseSchema.optional().meta({
      description: 'The newest release of any verdict, present when it differs from latest_release',
    }),
  })
  .meta({ id: 'Listing' });

export const ListingListSchema = z
  .object({ listings: z.array(ListingSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'ListingList' });

export const RetireResponseSchema = z
  .object({
    id: z.uuid(),
    status: z.literal('retired'),
    retired_at: z.iso.datetime(),
    repository: z
      .enum(['archived', 'none'])
      .meta({ description: 'A hosted repository is archived read-only' }),
  })
  .meta({ id: 'RetireResponse' });

export const LicenceRequestSchema = z
  .strictObject({
    spdx: z.enum(LICENCES).meta({ description: `One of ${LICENCES.join(', ')}` }),
  })
  .meta({ id: 'LicenceRequest' });

export const LicenceResponseSchema = z
  .object({
    listing_id: z.uuid(),
    spdx: z.enum(LICENCES),
    branch: z.string(),
    path: z.literal('LICENSE'),
    commit_sha: z.string(),
    committed: z.boolean().meta({ description: 'false when main already held exactly this LICENSE' }),
    next_step: z.string(),
  })
  .meta({ id: 'LicenceResponse' });

/** GET /api/github/repositories: what the caller can list from GitHub (listings/github-repositories.ts). */
export const GitHubRepositoriesSchema = z
  .object({
    enabled: z.boolean().meta({
      description:
        'false when this server has no GitHub App configured: `source: "github"` listings cannot be created here',
    }),
    install_url: z.string().nullable().meta({
      description:
        "Where an account installs the App (GitHub's `/installations/new` page); null when not enabled",
    }),
    claim: z
      .object({
        file: z.string().meta({ description: 'The file on the default branch that claims a repository' }),
        line: z.string().meta({ description: "The line it must hold: the caller's handle" }),
      })
      .meta({
        description: 'What to commit to a repository so that it is listed here and can be listed for sale',
      }),
    installations: z
      .array(
        z.object({
          installation_id: z.number().int(),
          account: z.string().meta({ description: 'The GitHub account the App is installed on' }),
          repositories: z.array(
            z.object({
              github_repo_id: z.number().int(),
              full_name: z.string().meta({ description: 'owner/name on GitHub' }),
              private: z.boolean().meta({ description: 'Only a private repository can be listed' }),
              default_branch: z.string(),
              listing_id: z.uuid().nullable().meta({
                description: "The caller's live listing backed by this repository, else null",
              }),
              in_use: z.boolean().meta({
                description: "Whether a live listing (anyone's) is backed by it: one repository, one listing",
              }),
            }),
          ),
        }),
      )
      .meta({
        description:
          'Installations holding a repository whose claim file names the caller, with those repositories only; nothing is shown of any other installation or repository',
      }),
    truncated: z.boolean().meta({
      description:
        'true when the scan stopped at its bound (100 installations, 200 repositories per call) before seeing every repository',
    }),
  })
  .meta({ id: 'GitHubRepositories' });

/**
 * A published listing's public manifest (GET /api/label, the manifest page's JSON, the MCP
 * `get_listing` result): the listing's document for buyers, built by public/manifest.ts.
 */
export const ManifestSchema = z
  .object({
    owner: z.string(),
    slug: z.string(),
    channel: z.string().meta({ description: '<owner>/<slug>' }),
    status: z
      .enum(['published', 'retired'])
      .meta({ description: '`retired`: no longer sold; holders still fetch what they own' }),
    version: z.string().meta({
      description:
        'X.Y.Z, the version on sale: the newest release whose scan passed (newer failing or pending releases are only in the release log)',
    }),
    artifact_sha256: z.string(),
    published_at: z.iso.datetime(),
    price_micro: MicroUsdc,
    update_price_micro: MicroUsdc.meta({ description: '`0` means updates are included' }),
    resource_endpoint: z.string().meta({ description: 'GET /api/r/{owner}/{slug}: buy or fetch' }),
    version_url: z.string().meta({ description: 'GET /api/v/{owner}/{slug}: version status' }),
    attestation_url: z.string().meta({
      description:
        "GET /api/v/{owner}/{slug}/releases/{version}/attestation: the signed in-toto statement of `version`'s zip (docs/ATTESTATIONS.md)",
    }),
    release_log: z
      .object({
        url: z
          .string()
          .meta({ description: 'GET /api/v/{owner}/{slug}/releases: every release, failing ones too' }),
        on_sale: z.string().meta({ description: 'What `version` is' }),
        cadence_counts: z.string().meta({ description: 'What computed.cadence.releases counts' }),
      })
      .meta({ description: 'The release log, and how `version` and the cadence relate to it' }),
    computed: z
      .record(z.string(), z.unknown())
      .meta({ description: 'What repo402 measured at release time (see docs/ANALYSIS.md), with `scan`' }),
    advisory_flag: AdvisoryFlagSchema.optional(),
    self_reported: z.object({ description: z.string(), trigger_hint: z.string() }),
  })
  .meta({ id: 'Manifest', description: 'Computed and self-reported fields in separate namespaces' });
