// Recompiles the devnet contracts into the committed artifacts: `npx tsx scripts/compile-contracts.ts`.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type ContractArtifact, compileContracts } from './solidity.js';

export const DEVNET_CONTRACTS_DIR = path.resolve(import.meta.dirname, '../src/devnet/contracts');
export const DEVNET_SOURCES = ['DevUSDC.sol', 'Multicall3.sol'].map((name) =>
  path.join(DEVNET_CONTRACTS_DIR, name),
);
export const DEVNET_ARTIFACTS_FILE = path.resolve(
  import.meta.dirname,
  '../src/devnet/generated/contract-artifacts.ts',
);

/** The artifacts as a TypeScript module, so the ABIs are typed and the build needs no JSON copying. */
export function renderArtifacts(artifacts: Record<string, ContractArtifact>): string {
  const lines = [
    '// GENERATED from ../contracts by `npx tsx scripts/compile-contracts.ts`; do not edit. test/devnet/contracts.test.ts recompiles and compares.',
    '',
  ];
  for (const artifact of Object.values(artifacts)) {
    lines.push(`export const ${artifact.contractName} = ${renderArtifact(artifact)} as const;`, '');
  }
  return lines.join('\n');
}

/** One ABI entry per line: the two contracts' ERC-20 fragments would otherwise repeat as long blocks. */
function renderArtifact(artifact: ContractArtifact): string {
  const fields = Object.entries(artifact).map(([name, value]) =>
    name === 'abi'
      ? `  "abi": [\n${(value as unknown[]).map((entry) => `    ${JSON.stringify(entry)}`).join(',\n')}\n  ]`
      : `  ${JSON.stringify(name)}: ${JSON.stringify(value)}`,
  );
  return `{\n${fields.join(',\n')}\n}`;
}

if (process.argv[1] === import.meta.filename) {
  const artifacts = await compileContracts(DEVNET_SOURCES);
  await writeFile(DEVNET_ARTIFACTS_FILE, renderArtifacts(artifacts));
  process.stdout.write(`wrote ${Object.keys(artifacts).join(', ')} to ${DEVNET_ARTIFACTS_FILE}\n`);
}
