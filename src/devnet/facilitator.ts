import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/http';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { publicActions } from 'viem';
import type { DevnetChain } from './chain.js';

/**
 * The reference @x402/evm `exact` facilitator, in-process, verifying and settling on the devnet
 * through viem. The platform account signs settlements; its nonce manager lets concurrent
 * settles each take their own nonce.
 */
export function devnetFacilitator(chain: DevnetChain): FacilitatorClient {
  const client = chain.walletClient.extend(publicActions);
  // toFacilitatorEvmSigner reads the signing address from the object itself.
  const signer = toFacilitatorEvmSigner({ ...client, address: chain.platform.address } as never);
  const facilitator = registerExactEvmScheme(new x402Facilitator(), {
    signer,
    networks: chain.network.caip2,
  });
  return {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    // The scheme registers every network it knows; this chain is one of them, and only it is served.
    getSupported: async () => {
      const supported = facilitator.getSupported();
      return {
        ...supported,
        kinds: supported.kinds.filter((kind) => kind.network === chain.network.caip2),
      } as never;
    },
  };
}
