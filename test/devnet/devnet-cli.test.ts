import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../src/db/connect.js';
import { DEVNET_GAS_ALLOWANCE_WEI } from '../../src/devnet/chain.js';
import { BASE } from '../../src/platform/networks.js';
import { openPaymentRail } from '../../src/x402/rail.js';
import { runCli } from '../support/process.js';

const HASH = /^0x[0-9a-f]{64}$/;
const BUYER = '0x1111111111111111111111111111111111111111';

describe('repo402 devnet fund', { timeout: 300_000 }, () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'repo402-devnet-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('mints test USDC and gives gas, printing only the transaction hash; the chain survives restarts', async () => {
    const offline = await runCli(['devnet', 'fund', BUYER, '1500000', '--init'], { DATA_DIR: dataDir });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout.trim()).toMatch(HASH);

    // A second process replays the first one's journal before minting on top of it.
    const again = await runCli(['devnet', 'fund', BUYER, '2500000'], { DATA_DIR: dataDir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toMatch(HASH);

    const database = await connectDatabase({ kind: 'pglite', dataDir: path.join(dataDir, 'db') });
    try {
      const appSecret = Buffer.from((await readFile(path.join(dataDir, 'app-secret'), 'utf8')).trim(), 'hex');
      const rail = await openPaymentRail(
        {
          mode: 'devnet',
          network: BASE,
          usdcContract: BASE.usdc,
          feeBps: 0,
          settlementTimeoutMs: 1000,
        },
        { database, appSecret },
      );
      // Two mints and one gas transfer (the second fund found the allowance there).
      expect(rail.devnet!.replayed).toBe(3);
      expect(await rail.devnet!.balanceOf(BUYER)).toBe(4_000_000n);
      expect(await rail.devnet!.publicClient.getBalance({ address: BUYER })).toBe(DEVNET_GAS_ALLOWANCE_WEI);
    } finally {
      await database.close();
    }
  });

  it('refuses a bad address or amount without printing on stdout', async () => {
    for (const args of [
      ['0x12', '1'],
      [BUYER, '-1'],
      [BUYER, '1.5'],
    ]) {
      const result = await runCli(['devnet', 'fund', ...args], { DATA_DIR: dataDir });
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stdout).toBe('');
    }
  });
});
