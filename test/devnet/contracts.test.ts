import { describe, expect, it } from 'vitest';
import { DEVNET_SOURCES } from '../../scripts/compile-contracts.js';
import { compileContracts } from '../../scripts/solidity.js';
import { DevUSDC, Multicall3 } from '../../src/devnet/generated/contract-artifacts.js';

const committed = { DevUSDC, Multicall3 };

describe('devnet contract artifacts', () => {
  it('are exactly what solc compiles from the committed sources (npx tsx scripts/compile-contracts.ts)', async () => {
    const fresh = await compileContracts(DEVNET_SOURCES);
    expect(Object.keys(fresh).sort()).toEqual(Object.keys(committed).sort());
    for (const [name, artifact] of Object.entries(fresh)) {
      const stored = committed[name as keyof typeof committed];
      expect(stored.compiler, name).toBe(artifact.compiler);
      expect(stored.deployedBytecode, name).toBe(artifact.deployedBytecode);
      expect(stored.bytecode, name).toBe(artifact.bytecode);
      expect(JSON.parse(JSON.stringify(stored.abi)), name).toEqual(artifact.abi);
    }
  }, 120_000);
});
