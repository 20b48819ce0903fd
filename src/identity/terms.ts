import type { PaymentNetwork } from '../platform/networks.js';

/**
 * The creator agreement and the buyer terms. `version` is what a creator accepts at registration
 * (`accepted_terms_version`); change it whenever either text changes.
 */

export const TERMS_VERSION = '2026-11-22';

/**
 * The texts name the network the deployment is paid on (Base; Base Sepolia on a testnet staging),
 * the one fact in them that differs between deployments.
 */
const creatorAgreement = (network: PaymentNetwork) => `# repo402 creator agreement

By registering you, the operator of the account ("creator"), agree to the following.

1. **Rights.** You list only code you own or are licensed to resell, and you have the right to
   grant buyers the licence stated on each listing.
2. **What you sell.** Each listing is sold as versioned zip artifacts cut from \`vX.Y.Z\` tags.
   Tags are immutable. Every release is analysed and scanned (secrets, vulnerable or malicious
   dependencies, hidden-Unicode instruction smuggling, size limits) and is recorded in a public
   release log that you cannot delete, failing releases included.
3. **No harmful content.** You do not publish malware, stolen code, credentials or content that
   instructs an automated agent to act against its user.
4. **Buyers keep what they bought.** A buyer who paid for a version may fetch it forever, also
   after you retire the listing. Retiring stops new sales only.
5. **Prices and payouts.** Prices are set per listing in micro-USDC and apply to future purchases
   only. Sales settle in USDC on ${network.name} (${network.caip2}). Your balance, less the platform fee in force,
   is paid to your payout address. A change of payout address or abuse contact takes effect 48
   hours after it is requested and must be signed by the currently bound payout address.
6. **Compliance.** You are not on a sanctions list and do not operate from a blocked jurisdiction.
   Payouts to sanctioned addresses are refused.
7. **Abuse contact.** You keep a working abuse contact and answer reports about your listings.
8. **Suspension.** repo402 may pause sales of a listing that breaks this agreement; holders keep
   access to versions they own.
`;

const buyerTerms = (network: PaymentNetwork) => `# repo402 buyer terms

1. **What you buy.** A payment buys one listing version (or, when updates are included, every
   later version) under the licence shown on the listing. Prices are quoted in a 402 response;
   you sign exactly the amount quoted.
2. **Payment.** Payments are USDC authorizations (EIP-3009) settled on ${network.name} (${network.caip2}).
   Access is granted only after settlement returns a transaction hash. A settled payment is final.
3. **Access.** A grant is a signed download URL valid for 5 minutes. You may fetch any version you
   own again, free, at any time, also after the listing is retired.
4. **Trust reports.** Scan results and computed manifest fields describe what automated analysis
   found; they are not a warranty. Self-reported fields are the creator's words.
5. **No warranty.** Code is provided by its creator as is, under its licence.
6. **Compliance.** Purchases from sanctioned addresses or blocked jurisdictions are refused.
`;

export interface TermsDocument {
  version: string;
  url: string;
  text: string;
}

export interface Terms extends TermsDocument {
  buyer_terms: TermsDocument;
}

export function currentTerms(baseUrl: string, network: PaymentNetwork): Terms {
  return {
    version: TERMS_VERSION,
    url: `${baseUrl}/docs/terms#creator-agreement`,
    text: creatorAgreement(network),
    buyer_terms: {
      version: TERMS_VERSION,
      url: `${baseUrl}/docs/terms#buyer-terms`,
      text: buyerTerms(network),
    },
  };
}
