/**
 * Whether `error` (as thrown by Drizzle on PGlite or node-postgres, which wrap the driver's error
 * in `cause`) is PostgreSQL's unique_violation: an insert or update a unique index refused.
 */
export function isUniqueViolation(error: unknown): boolean {
  for (let current = error; current; current = (current as { cause?: unknown }).cause) {
    if ((current as { code?: unknown }).code === '23505') return true;
  }
  return false;
}
