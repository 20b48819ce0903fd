import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { currentTerms } from '../identity/terms.js';
import { prebuilt, sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses } from '../platform/http/schemas.js';

const TermsDocumentSchema = z.object({ version: z.string(), url: z.string(), text: z.string() });
export const TermsSchema = TermsDocumentSchema.extend({ buyer_terms: TermsDocumentSchema }).meta({
  id: 'Terms',
});

export function registerTermsRoute(app: App, ctx: AppContext): void {
  const terms = prebuilt(TermsSchema.parse(currentTerms(ctx.config.baseUrl, ctx.config.payments.network)));
  app.get(
    '/api/terms',
    {
      schema: {
        tags: ['public'],
        summary: 'The creator agreement (top level) and the buyer terms; accept `version` at registration',
        response: { 200: TermsSchema, ...errorResponses() },
      },
    },
    async (request, reply) => sendPrebuilt(request, reply, terms, 'public, max-age=300'),
  );
}
