import { z } from 'zod';
import { CREATOR_EVENTS, HOLDER_EVENTS } from './catalogue.js';

const UrlField = z
  .url({ protocol: /^https?$/, error: 'expected an http or https URL' })
  .max(2000)
  .meta({ description: 'Where each event is POSTed; a public address (docs/WEBHOOKS.md)' });

export const HolderSubscribeSchema = z.strictObject({
  url: UrlField,
  events: z.array(z.enum(HOLDER_EVENTS)).min(1).max(HOLDER_EVENTS.length),
  listing: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}\/[A-Za-z0-9._-]{1,64}$/, 'expected owner/slug')
    .optional()
    .meta({ description: 'One listing the wallet holds; absent: every listing it holds, now and later' }),
});

export const CreatorSubscribeSchema = z.strictObject({
  url: UrlField,
  events: z.array(z.enum(CREATOR_EVENTS)).min(1).max(CREATOR_EVENTS.length),
});

export const SubscriptionIdParams = z.strictObject({ id: z.uuid('expected a UUID') });

export const SubscriptionSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    listing: z
      .string()
      .nullable()
      .meta({ description: 'owner/slug for a holder subscription limited to one listing' }),
    created_at: z.string(),
    status: z.enum(['active', 'disabled']),
    disabled_at: z.string().nullable(),
    disabled_reason: z.string().nullable().meta({ description: 'Why deliveries stopped, in words' }),
    consecutive_failures: z.number().int(),
  })
  .meta({ id: 'WebhookSubscription' });

export const CreatedSubscriptionSchema = SubscriptionSchema.extend({
  secret: z.string().meta({
    description:
      'The signing secret (Standard Webhooks `whsec_…`), shown this once: verify each delivery with it',
  }),
}).meta({ id: 'CreatedWebhookSubscription' });

export const SubscriptionListSchema = z.object({ subscriptions: z.array(SubscriptionSchema) });

export const DeliveryLogSchema = z
  .object({
    subscription: SubscriptionSchema,
    deliveries: z.array(
      z.object({
        id: z.string().meta({ description: 'Also the `webhook-id` header, as `msg_<id>`' }),
        event_id: z.string(),
        type: z.string(),
        state: z.enum(['pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        last_attempt_at: z.string().nullable(),
        last_status: z.number().int().nullable(),
        last_error: z.string().nullable(),
        next_attempt_at: z.string().nullable(),
        created_at: z.string(),
        delivered_at: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'WebhookDeliveryLog' });

export const DeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });
