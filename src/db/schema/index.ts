// Every domain's tables, so Drizzle (queries and drizzle-kit) sees one schema.
export * from './attestations.js';
export * from './identity.js';
export * from './listings.js';
export * from './moderation.js';
export * from './payments.js';
export * from './platform.js';
export * from './scan.js';
export * from './webhooks.js';
