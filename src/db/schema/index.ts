// Every domain's tables, so Drizzle (queries and drizzle-kit) sees one schema.
export * from './identity.js';
export * from './platform.js';
