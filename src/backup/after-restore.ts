import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { recoverFromChain } from '../earnings/chain-recovery.js';
import { RESTORED_FROM_FILE } from './restore.js';

/** Sales recorded just before the backup was taken are looked for too: they cost a read, never a record. */
const MARGIN_MS = 60 * 60_000;

/**
 * The first start of a process that takes payments on a restored DATA_DIR reconciles the database
 * against the chain since the backup was taken, before any job runs (so before any payout sweep),
 * and notes in `restored-from.json` that it did. A chain that cannot be read stops the start: a
 * sweep run on a database that forgot its payouts would pay them again.
 */
export async function reconcileAfterRestore(ctx: AppContext): Promise<void> {
  const file = path.join(ctx.config.dataDir, RESTORED_FROM_FILE);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  let record: { created_at?: unknown; chain_reconciled?: unknown };
  try {
    record = JSON.parse(text);
  } catch {
    throw new Error(
      `${file} is not JSON: restore the DATA_DIR again, or remove the file after running repo402 reconcile`,
    );
  }
  if (record.chain_reconciled) return;
  const taken = typeof record.created_at === 'string' ? Date.parse(record.created_at) : Number.NaN;
  if (Number.isNaN(taken)) throw new Error(`${file} names no backup time (created_at)`);
  const since = new Date(taken - MARGIN_MS);
  ctx.log.info(
    { since: since.toISOString() },
    'restored from a backup: reconciling the database against the chain',
  );
  let result: Awaited<ReturnType<typeof recoverFromChain>>;
  try {
    result = await recoverFromChain(ctx, since);
  } catch (error) {
    throw new Error(
      `this DATA_DIR was restored from a backup and could not be reconciled against the chain (${(error as Error).message}); ` +
        'fix the chain endpoint (BASE_RPC_URL) and start again, or run `repo402 reconcile --since <the backup time>`',
    );
  }
  const reconciled = { ...record, chain_reconciled: { at: ctx.clock.now().toISOString(), ...result } };
  await writeFile(`${file}.partial`, `${JSON.stringify(reconciled, null, 2)}\n`, { mode: 0o600 });
  await rename(`${file}.partial`, file);
}
