import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { CHAIN_MARGIN_MS, reconcileIfChainAhead, recoverFromChain } from '../earnings/chain-recovery.js';
import { RESTORED_FROM_FILE } from './restore.js';

/**
 * What a process that takes payments does at start, before any job runs (so before any payout
 * sweep): on a DATA_DIR restored by `repo402 restore`, reconcile since the backup; on any other,
 * check whether the chain holds transfers the database lacks (a database restored another way)
 * and reconcile if so. A chain that cannot be read stops the start either way: a sweep run on a
 * database that forgot its payouts would pay them again, and opening the payment rail has just
 * read that chain.
 */
export async function reconcileAtStart(ctx: AppContext): Promise<void> {
  if (await reconcileAfterRestore(ctx)) return;
  try {
    await reconcileIfChainAhead(ctx);
  } catch (error) {
    throw new Error(
      `could not check the database against the chain at start (${(error as Error).message}); ` +
        'fix the chain endpoint (BASE_RPC_URL) and start again',
    );
  }
}

/**
 * The first start of a process that takes payments on a restored DATA_DIR reconciles the database
 * against the chain since the backup was taken and notes in `restored-from.json` that it did.
 * True when it reconciled now.
 */
export async function reconcileAfterRestore(ctx: AppContext): Promise<boolean> {
  const file = path.join(ctx.config.dataDir, RESTORED_FROM_FILE);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  let record: { created_at?: unknown; chain_reconciled?: unknown };
  try {
    record = JSON.parse(text);
  } catch {
    throw new Error(
      `${file} is not JSON: restore the DATA_DIR again, or remove the file after running repo402 reconcile`,
    );
  }
  if (record.chain_reconciled) return false;
  const taken = typeof record.created_at === 'string' ? Date.parse(record.created_at) : Number.NaN;
  if (Number.isNaN(taken)) throw new Error(`${file} names no backup time (created_at)`);
  const since = new Date(taken - CHAIN_MARGIN_MS);
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
  return true;
}
