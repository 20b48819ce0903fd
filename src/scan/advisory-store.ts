import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/connect.js';
import { advisories, advisoryPackages, advisorySync } from '../db/schema/index.js';
import { isMalicious, normaliseName, type OsvRecord, recordSeverity, SUPPORTED_ECOSYSTEMS } from './osv.js';
import type { Severity } from './types.js';

export interface StoredAdvisory {
  id: string;
  summary: string;
  severity: Severity | null;
  cvssScore: number | null;
  malicious: boolean;
  aliases: string[];
  ecosystem: string;
  name: string;
  ranges: unknown;
  versions: string[];
}

/**
 * Inserts or replaces records; a record already stored with the same or a newer `modified` is left
 * alone, so re-importing a dump is cheap and never goes back in time. Returns how many changed.
 */
export async function upsertAdvisories(db: Db, records: OsvRecord[], now: Date): Promise<number> {
  if (records.length === 0) return 0;
  const latest = new Map<string, OsvRecord>();
  for (const record of records) {
    const seen = latest.get(record.id);
    if (!seen || Date.parse(record.modified) > Date.parse(seen.modified)) latest.set(record.id, record);
  }
  return db.transaction(async (tx) => {
    const existing = await tx
      .select({ id: advisories.id, modified: advisories.modified })
      .from(advisories)
      .where(inArray(advisories.id, [...latest.keys()]));
    const stored = new Map(existing.map((row) => [row.id, row.modified.getTime()]));
    const fresh = [...latest.values()].filter(
      (r) => !stored.has(r.id) || Date.parse(r.modified) > stored.get(r.id)!,
    );
    if (fresh.length === 0) return 0;
    const ids = fresh.map((r) => r.id);
    await tx.delete(advisories).where(inArray(advisories.id, ids));
    await tx.insert(advisories).values(
      fresh.map((record) => {
        const { severity, score } = recordSeverity(record);
        return {
          id: record.id,
          modified: new Date(record.modified),
          withdrawn: record.withdrawn ? new Date(record.withdrawn) : null,
          summary: (record.summary ?? record.details ?? record.id).slice(0, 500),
          severity,
          cvssScore: score,
          malicious: isMalicious(record),
          aliases: (record.aliases ?? []).filter((a) => typeof a === 'string'),
          record,
          importedAt: now,
        };
      }),
    );
    const packages = fresh.flatMap((record) =>
      (record.affected ?? []).flatMap((affected, position) => {
        const ecosystem = affected.package?.ecosystem;
        const name = affected.package?.name;
        if (!ecosystem || !name || !SUPPORTED_ECOSYSTEMS.has(ecosystem)) return [];
        return [
          {
            advisoryId: record.id,
            position,
            ecosystem,
            name: normaliseName(ecosystem, name),
            ranges: affected.ranges ?? [],
            versions: (affected.versions ?? []).filter((v) => typeof v === 'string'),
          },
        ];
      }),
    );
    for (let i = 0; i < packages.length; i += 1000)
      await tx.insert(advisoryPackages).values(packages.slice(i, i + 1000));
    return fresh.length;
  });
}

/** Every live (not withdrawn) advisory naming one of these packages. */
export async function advisoriesFor(
  db: Db,
  packages: Array<{ ecosystem: string; name: string }>,
): Promise<StoredAdvisory[]> {
  if (packages.length === 0) return [];
  const names = [...new Set(packages.map((p) => normaliseName(p.ecosystem, p.name)))];
  const rows: StoredAdvisory[] = [];
  for (let i = 0; i < names.length; i += 1000) {
    const batch = await db
      .select({
        id: advisories.id,
        summary: advisories.summary,
        severity: advisories.severity,
        cvssScore: advisories.cvssScore,
        malicious: advisories.malicious,
        aliases: advisories.aliases,
        ecosystem: advisoryPackages.ecosystem,
        name: advisoryPackages.name,
        ranges: advisoryPackages.ranges,
        versions: advisoryPackages.versions,
      })
      .from(advisoryPackages)
      .innerJoin(advisories, eq(advisories.id, advisoryPackages.advisoryId))
      .where(and(inArray(advisoryPackages.name, names.slice(i, i + 1000)), isNull(advisories.withdrawn)));
    rows.push(...(batch as StoredAdvisory[]));
  }
  return rows;
}

/** Size and freshness of the dataset, for the check's `tool_version`. */
export async function advisoryDatasetStamp(db: Db): Promise<{ records: number; newest: Date | null }> {
  const [row] = await db
    .select({ records: sql<number>`count(*)::int`, newest: sql<string | null>`max(${advisories.modified})` })
    .from(advisories);
  return { records: Number(row?.records ?? 0), newest: row?.newest ? new Date(row.newest) : null };
}

export type AdvisorySyncRow = typeof advisorySync.$inferSelect;

export async function advisorySyncState(db: Db, ecosystem: string): Promise<AdvisorySyncRow | undefined> {
  const [row] = await db.select().from(advisorySync).where(eq(advisorySync.ecosystem, ecosystem));
  return row;
}

/** After an export was imported whole: its validators, the time and the dataset stamp. */
export async function recordAdvisoryImport(db: Db, row: AdvisorySyncRow): Promise<void> {
  const { ecosystem: _key, ...changes } = row;
  await db
    .insert(advisorySync)
    .values(row)
    .onConflictDoUpdate({ target: advisorySync.ecosystem, set: changes });
}

/**
 * Any other attempt (not modified, or failed): only when it ran and why it failed (null for none);
 * the validators of the last import stay as they were.
 */
export async function recordAdvisoryCheck(
  db: Db,
  attempt: Pick<AdvisorySyncRow, 'ecosystem' | 'url' | 'checkedAt' | 'error'>,
): Promise<void> {
  await db
    .insert(advisorySync)
    .values(attempt)
    .onConflictDoUpdate({
      target: advisorySync.ecosystem,
      set: { checkedAt: attempt.checkedAt, error: attempt.error },
    });
}
