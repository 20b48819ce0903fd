import { type Hex, isHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Eip1193Provider } from '../wallet.js';
import type { PageChain, WalletOption } from './wallets.js';

/**
 * The devnet's test wallet: a key generated in this browser tab and kept in its sessionStorage, so
 * a person trying a devnet server never signs with their everyday wallet (a devnet is test money
 * dressed as Base). It answers the EIP-1193 calls the checkout makes, as an extension would.
 */
const STORAGE_KEY = 'repo402.devnet-test-wallet';

function tabKey(): Hex {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (stored && /^0x[0-9a-f]{64}$/.test(stored)) return stored as Hex;
  const key = generatePrivateKey();
  sessionStorage.setItem(STORAGE_KEY, key);
  return key;
}

interface TypedDataJson {
  domain: Record<string, unknown>;
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: string;
  message: Record<string, unknown>;
}

export function testWallet(chain: PageChain): WalletOption {
  const account = privateKeyToAccount(tabKey());
  const provider: Eip1193Provider = {
    async request({ method, params = [] }) {
      switch (method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          return [account.address];
        case 'eth_chainId':
          return chain.hex;
        case 'personal_sign': {
          const [message] = params as [string];
          return account.signMessage({ message: isHex(message) ? { raw: message } : message });
        }
        case 'eth_signTypedData_v4': {
          const typed = JSON.parse((params as [string, string])[1]) as TypedDataJson;
          const { EIP712Domain: _domain, ...types } = typed.types;
          const fields = types[typed.primaryType] ?? [];
          // JSON carries integers as decimal strings; the signer takes them as numbers.
          const message = Object.fromEntries(
            Object.entries(typed.message).map(([name, value]) => {
              const type = fields.find((field) => field.name === name)?.type ?? '';
              return [name, /^u?int\d*$/.test(type) ? BigInt(value as string) : value];
            }),
          );
          return account.signTypedData({ ...typed, types, message } as never);
        }
        default:
          throw Object.assign(new Error(`The test wallet does not support ${method}`), { code: 4200 });
      }
    },
  };
  return { id: 'devnet-test-wallet', rdns: 'devnet-test-wallet', name: 'Test wallet', provider, test: true };
}
