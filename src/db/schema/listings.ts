import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { at, micro } from './columns.js';
import { creators } from './identity.js';

/**
 * A listing. `owner` is the creator's handle, copied so public routes resolve `/{owner}/{slug}`
 * with one index lookup. `price_micro` stays null until the creator sets a price (zero is a free
 * listing, which is not the same as no price).
 */
export const listings = pgTable(
  'listings',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    creatorId: uuid('creator_id')
      .notNull()
      .references(() => creators.id),
    owner: text('owner').notNull(),
    slug: text('slug').notNull(),
    source: text('source', { enum: ['hosted', 'github'] }).notNull(),
    status: text('status', { enum: ['draft', 'published', 'retired'] })
      .notNull()
      .default('draft'),
    priceMicro: micro('price_micro'),
    updatePriceMicro: micro('update_price_micro').notNull().default(sql`0`),
    description: text('description').notNull().default(''),
    triggerHint: text('trigger_hint').notNull().default(''),
    /** SPDX id of the LICENSE committed through the licence route, if any. */
    licence: text('licence'),
    createdAt: at('created_at').notNull(),
    publishedAt: at('published_at'),
    retiredAt: at('retired_at'),
    /** Rail A: the App installation that reaches the repository, and the repository's GitHub id. */
    githubInstallationId: bigint('github_installation_id', { mode: 'number' }),
    githubRepoId: bigint('github_repo_id', { mode: 'number' }),
    /** `owner/name` on GitHub as last seen (a repository can be renamed; its id stays). */
    githubRepo: text('github_repo'),
    /**
     * Whether new releases can be cut from the source: `unreachable` once the App lost access
     * (uninstalled, suspended, repository removed), `public` once the repository was made public.
     * What was cut stays on sale and downloadable either way.
     */
    sourceState: text('source_state', { enum: ['ok', 'unreachable', 'public'] })
      .notNull()
      .default('ok'),
    sourceStateReason: text('source_state_reason'),
    sourceStateAt: at('source_state_at'),
    /**
     * Set while the operator has suspended the listing (`listing`) or its creator (`creator`): it
     * sells nothing and its page says why; holders keep what they own. Lifting a creator's
     * suspension lifts only what it set.
     */
    suspendedAt: at('suspended_at'),
    suspensionReason: text('suspension_reason'),
    suspendedBy: text('suspended_by', { enum: ['listing', 'creator'] }),
  },
  (table) => [
    uniqueIndex('listings_owner_slug').on(table.owner, table.slug),
    index('listings_creator_created').on(table.creatorId, table.createdAt, table.id),
    /** Listings on sale, newest published first (the home page reads a page of them at a time). */
    index('listings_published_order')
      .on(table.publishedAt, table.id)
      .where(sql`${table.status} = 'published'`),
    // One repository backs at most one live listing.
    uniqueIndex('listings_github_repo_live')
      .on(table.githubRepoId)
      .where(sql`${table.githubRepoId} is not null and ${table.status} <> 'retired'`),
    index('listings_github_installation').on(table.githubInstallationId),
    check(
      'listings_github_source',
      sql`(${table.source} = 'github') = (${table.githubRepoId} is not null and ${table.githubInstallationId} is not null)`,
    ),
  ],
);

/**
 * GitHub webhook deliveries already handled, by `X-GitHub-Delivery` and by content (the SHA-256
 * of the event name and the signed body): a redelivery, or the same signed body sent again under
 * another delivery id, is answered without being handled again. Rows from before content was
 * recorded have none.
 */
export const githubDeliveries = pgTable(
  'github_deliveries',
  {
    deliveryId: text('delivery_id').primaryKey(),
    event: text('event').notNull(),
    receivedAt: at('received_at').notNull(),
    contentSha256: text('content_sha256'),
  },
  (table) => [index('github_deliveries_content').on(table.contentSha256, table.receivedAt)],
);

/**
 * A release tag moved or deleted on GitHub after its release was cut. Nothing is re-cut (what
 * was sold stays what it was); the creator is shown the change.
 */
export const tagChanges = pgTable(
  'tag_changes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    tag: text('tag').notNull(),
    /** The commit the release was cut from. */
    releasedCommitSha: text('released_commit_sha').notNull(),
    /** Where the tag points now; null once deleted. */
    commitSha: text('commit_sha'),
    seenAt: at('seen_at').notNull(),
  },
  (table) => [
    unique('tag_changes_listing_tag_commit')
      .on(table.listingId, table.tag, table.commitSha)
      .nullsNotDistinct(),
  ],
);

/**
 * SSH public keys allowed to push to and fetch from one hosted listing's repository. Replacing the
 * key revokes the old row; at most one live key per listing.
 */
export const deployKeys = pgTable(
  'deploy_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    /** `SHA256:` + unpadded base64 of the key blob, as `ssh-keygen -lf` prints it. */
    fingerprint: text('fingerprint').notNull(),
    algorithm: text('algorithm').notNull(),
    /** The OpenSSH one-line form, without its comment. */
    publicKey: text('public_key').notNull(),
    createdAt: at('created_at').notNull(),
    revokedAt: at('revoked_at'),
  },
  (table) => [
    uniqueIndex('deploy_keys_live_listing').on(table.listingId).where(sql`${table.revokedAt} is null`),
    index('deploy_keys_fingerprint').on(table.fingerprint),
  ],
);

/**
 * A requested cut of one version: written by a pushed tag or by sync before the job runs, so the
 * version is claimed at once (`version_exists`) and a dropped job can be re-sent. The job turns it
 * into a `releases` row (`state = cut`), into a release refused before any zip was made (`refused`:
 * its tree passed a limit), or records why it could not (`failed`). Claims count against the
 * listing's releases per day, so they are taken with the creator's row locked.
 *
 * `holds_version` is false on a cut that failed because its source refused it (GitHub access gone,
 * the repository public): it made no release, so its version is free to be claimed again, and the
 * next claim of that version takes this row back (`queued`, `holds_version` true). One row per
 * listing and version either way.
 */
export const releaseCuts = pgTable(
  'release_cuts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    version: text('version').notNull(),
    tag: text('tag').notNull(),
    commitSha: text('commit_sha').notNull(),
    trigger: text('trigger', { enum: ['push', 'sync'] }).notNull(),
    state: text('state', { enum: ['queued', 'cut', 'refused', 'failed'] })
      .notNull()
      .default('queued'),
    failureReason: text('failure_reason'),
    holdsVersion: boolean('holds_version').notNull().default(true),
    requestedAt: at('requested_at').notNull(),
    finishedAt: at('finished_at'),
    /**
     * How far the running cut has got (`CUT_STAGES`, src/listings/cut-stages.ts) and since when;
     * null until its job starts. Kept here, not on the release, because the snapshot stage comes
     * before the release row exists. It only moves forward; once the release has its verdict it is
     * no longer shown.
     */
    stage: text('stage', { enum: ['snapshot', 'analysis', 'scan', 'attestation'] }),
    stageAt: at('stage_at'),
  },
  (table) => [
    uniqueIndex('release_cuts_listing_version').on(table.listingId, table.version),
    index('release_cuts_state').on(table.state),
    index('release_cuts_listing_requested').on(table.listingId, table.requestedAt),
  ],
);

/**
 * One release: the snapshot of a tagged commit and what inspection found. Rows are never deleted
 * (the public log keeps failing releases too) and `verdict` moves only from `pending`, once.
 * `major`/`minor`/`patch` order releases by version.
 *
 * The zip is content-addressed: `artifact_key` is `artifacts/sha256/<artifact_sha256>.zip`, written
 * once and shared by every release whose zip has the same bytes. A release refused before its zip
 * was made (its tree passed a limit) has no artifact at all and is `fail` from the start; the
 * check constraint keeps every release that could be sold (`pending`, `pass`) with its zip.
 */
export const releases = pgTable(
  'releases',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    listingId: uuid('listing_id')
      .notNull()
      .references(() => listings.id),
    version: text('version').notNull(),
    major: integer('major').notNull(),
    minor: integer('minor').notNull(),
    patch: integer('patch').notNull(),
    tag: text('tag').notNull(),
    commitSha: text('commit_sha').notNull(),
    artifactKey: text('artifact_key'),
    artifactSha256: text('artifact_sha256'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    sbomKey: text('sbom_key'),
    publishedAt: at('published_at').notNull(),
    changelog: text('changelog').notNull(),
    diffSummary: jsonb('diff_summary'),
    computed: jsonb('computed'),
    scan: jsonb('scan'),
    verdict: text('verdict', { enum: ['pending', 'pass', 'fail'] })
      .notNull()
      .default('pending'),
    analyzerVersion: text('analyzer_version'),
    scannerVersion: text('scanner_version'),
    /**
     * When the release first went on sale (became its published listing's newest passing release),
     * and the listing's prices then; null for a release never on sale. Kept as first recorded.
     */
    onSaleAt: at('on_sale_at'),
    onSalePriceMicro: micro('on_sale_price_micro'),
    onSaleUpdatePriceMicro: micro('on_sale_update_price_micro'),
    /**
     * Set when advisory data that arrived after the scan matches one of the release's dependencies
     * with a blocking (HIGH, CRITICAL or malicious) record: `{advisory_ids, findings}`. The verdict
     * stays what the scan decided; this says what is known since. Null when nothing matches.
     */
    advisoryFlag: jsonb('advisory_flag'),
    /** When `advisory_flag` last changed to its current list of advisories. */
    advisoryFlaggedAt: at('advisory_flagged_at'),
    /**
     * Set while the operator has yanked the release: it is neither sold nor served (`410
     * release_yanked`), stays in the log marked, and its attestation stays. Cleared by unyank.
     */
    yankedAt: at('yanked_at'),
    yankReason: text('yank_reason'),
  },
  (table) => [
    uniqueIndex('releases_listing_version').on(table.listingId, table.version),
    index('releases_listing_order').on(table.listingId, table.major, table.minor, table.patch),
    index('releases_artifact').on(table.artifactSha256),
    check(
      'releases_artifact_whole',
      sql`(${table.artifactKey} is null) = (${table.artifactSha256} is null) and (${table.artifactKey} is null) = (${table.sizeBytes} is null) and (${table.artifactKey} is not null or ${table.verdict} = 'fail')`,
    ),
  ],
);

/**
 * A release's file tree (`computed.tree`), in parts of at most 1,000 files in tree order. Kept out
 * of `releases.computed`: at the file limit the tree is about 1.2 MB of JSON, and on the embedded
 * database one statement writing or reading it held the event loop for longer than any request
 * may wait; parts are written and read one small statement at a time.
 */
export const releaseTreeParts = pgTable(
  'release_tree_parts',
  {
    releaseId: uuid('release_id')
      .notNull()
      .references(() => releases.id),
    part: integer('part').notNull(),
    files: jsonb('files').notNull(),
  },
  (table) => [primaryKey({ columns: [table.releaseId, table.part] })],
);
