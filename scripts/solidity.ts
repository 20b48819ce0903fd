import { readFile } from 'node:fs/promises';
import path from 'node:path';
import solc from 'solc';

/**
 * Compiles Solidity sources with the `solc` npm package (WebAssembly, no download), with fixed
 * settings so the same source always gives the same bytes: the committed devnet artifacts are
 * checked against a fresh compile by a test.
 */

export interface ContractArtifact {
  contractName: string;
  sourceName: string;
  compiler: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
}

export async function compileContracts(files: string[]): Promise<Record<string, ContractArtifact>> {
  const sources: Record<string, { content: string }> = {};
  for (const file of files) sources[path.basename(file)] = { content: await readFile(file, 'utf8') };
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      metadata: { bytecodeHash: 'none' },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<
        string,
        { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
      >
    >;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const artifacts: Record<string, ContractArtifact> = {};
  for (const [sourceName, contracts] of Object.entries(output.contracts)) {
    for (const [contractName, contract] of Object.entries(contracts)) {
      artifacts[contractName] = {
        contractName,
        sourceName,
        compiler: solc.version(),
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}`,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
      };
    }
  }
  return artifacts;
}
