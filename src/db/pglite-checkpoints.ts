/** A database's `query`, as `Database` has it (connect.ts, which starts the checkpoints). */
interface Queries {
  query<T>(text: string): Promise<{ rows: T[] }>;
}

/** How often the embedded database's WAL since its last checkpoint is looked at. */
const LOOK_EVERY_MS = 60_000;
/** WAL since the last checkpoint past which the embedded database checkpoints: four segments. */
export const CHECKPOINT_AFTER_WAL_BYTES = 64n * 1024n * 1024n;

/**
 * PostgreSQL checkpoints by itself only under a postmaster, and PGlite runs it in single-user mode:
 * no checkpoint comes until it closes. Its WAL then grows by every change for as long as the
 * server runs (measured: 9 segments, 144 MB, after 120 MB of inserts with `max_wal_size` 32 MB and
 * not one checkpoint), each 16 MB of it a new file, and a crash replays all of it. So once a minute,
 * past `CHECKPOINT_AFTER_WAL_BYTES` of WAL since the last checkpoint, the server asks for one
 * (about 50 ms on the event loop); the segments it frees are recycled rather than made anew.
 * Returns the function that stops it.
 */
export function checkpointWhenWalGrows(database: Queries): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    // A look that fails (the database closing) is made again the next minute.
    checkpointIfDue(database)
      .catch(() => false)
      .finally(() => {
        busy = false;
      });
  }, LOOK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Checkpoints when at least `afterBytes` of WAL were written since the last checkpoint began; says whether it did. */
export async function checkpointIfDue(
  database: Queries,
  afterBytes = CHECKPOINT_AFTER_WAL_BYTES,
): Promise<boolean> {
  const { rows } = await database.query<{ since: string }>(
    'select pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint::text as since from pg_control_checkpoint()',
  );
  if (BigInt(rows[0]?.since ?? '0') < afterBytes) return false;
  await database.query('checkpoint');
  return true;
}
