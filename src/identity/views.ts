import type { z } from 'zod';
import type { IssuedApiKey } from './api-keys.js';
import type { CreatorView } from './creators.js';
import type { CreateCreatorResponseSchema, CreatorSchema } from './schemas.js';

/** The wire form (snake_case, ISO timestamps) of a creator. */
export function creatorBody(view: CreatorView): z.infer<typeof CreatorSchema> {
  return {
    id: view.id,
    handle: view.handle,
    payout_address: view.payoutAddress,
    abuse_contact: view.abuseContact,
    accepted_terms_version: view.acceptedTermsVersion,
    created_at: view.createdAt.toISOString(),
    pending_changes: view.pendingChanges.map((change) => ({
      field: change.field,
      value: change.value,
      requested_at: change.requestedAt.toISOString(),
      effective_at: change.effectiveAt.toISOString(),
    })),
  };
}

export function createdCreatorBody(
  view: CreatorView,
  key: IssuedApiKey,
): z.infer<typeof CreateCreatorResponseSchema> {
  return { ...creatorBody(view), api_key: key.apiKey, scopes: key.scopes };
}
