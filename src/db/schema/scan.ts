import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
} from 'drizzle-orm/pg-core';
import { at } from './columns.js';

/**
 * OSV advisories imported by `repo402 advisories import`. Only what matching needs is a column;
 * `record` keeps the whole OSV record for the report and for re-deriving fields later.
 */
export const advisories = pgTable('advisories', {
  id: text('id').primaryKey(),
  modified: at('modified').notNull(),
  withdrawn: at('withdrawn'),
  summary: text('summary').notNull(),
  /** LOW, MODERATE, HIGH or CRITICAL; null when the record states none. */
  severity: text('severity'),
  cvssScore: doublePrecision('cvss_score'),
  malicious: boolean('malicious').notNull(),
  aliases: jsonb('aliases').$type<string[]>().notNull(),
  record: jsonb('record').notNull(),
  importedAt: at('imported_at').notNull(),
});

/** One row per `affected[]` entry: the package and its version ranges, looked up by ecosystem and name. */
export const advisoryPackages = pgTable(
  'advisory_packages',
  {
    advisoryId: text('advisory_id')
      .notNull()
      .references(() => advisories.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    ecosystem: text('ecosystem').notNull(),
    /** Normalised as the ecosystem compares names (PyPI: PEP 503; npm, crates, Go: as written, lower-cased for PyPI only). */
    name: text('name').notNull(),
    ranges: jsonb('ranges').notNull(),
    versions: jsonb('versions').$type<string[]>().notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.advisoryId, table.position] }),
    index('advisory_packages_lookup').on(table.ecosystem, table.name),
  ],
);

/**
 * The OSV export mirror as last seen, per ecosystem: the validators of the last export imported
 * (sent back as If-None-Match / If-Modified-Since, so a restart does not download it again) and
 * the outcome of the last attempt. A failed attempt leaves the validators and the data alone.
 */
export const advisorySync = pgTable('advisory_sync', {
  ecosystem: text('ecosystem').primaryKey(),
  /** The export the validators belong to; another mirror's are never sent. */
  url: text('url').notNull(),
  etag: text('etag'),
  lastModified: text('last_modified'),
  /** When the last export was downloaded and imported whole. */
  importedAt: at('imported_at'),
  /** The advisory checks' `tool_version` right after that import (`osvStamp`). */
  datasetStamp: text('dataset_stamp'),
  checkedAt: at('checked_at').notNull(),
  /** Why the last attempt failed; null once one succeeds. */
  error: text('error'),
});

/** The blob set of one release, recorded once (a retried cut finds it and keeps the first time). */
export const releaseBlobSets = pgTable(
  'release_blob_sets',
  {
    listingId: text('listing_id').notNull(),
    version: text('version').notNull(),
    /** `owner/slug`, so overlap reports name the other listing without reading the listings domain. */
    channel: text('channel').notNull(),
    blobsTotal: integer('blobs_total').notNull(),
    recordedAt: at('recorded_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.listingId, table.version] })],
);

/**
 * Git blob SHA-1s of each release, for originality (blob overlap between listings). No primary key:
 * rows are written once, in the transaction that creates their `release_blob_sets` row, and a
 * third index on 20,000 rows per release tripled the insert time on PGlite.
 */
export const releaseBlobs = pgTable(
  'release_blobs',
  {
    listingId: text('listing_id').notNull(),
    version: text('version').notNull(),
    blobSha: text('blob_sha').notNull(),
  },
  (table) => [
    index('release_blobs_sha').on(table.blobSha),
    index('release_blobs_release').on(table.listingId, table.version),
  ],
);
