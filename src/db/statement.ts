import type { Column } from 'drizzle-orm';

/**
 * Hand-written statements of a hot path (the buy path), run with `Database.run`: each is parsed
 * and planned once per connection (a named prepared statement on both drivers), and no query
 * builder runs per call. `Row` is the shape its rows come back in, named as the SQL names its
 * columns, with values as the driver parses them: `numeric` and `int8` as strings or numbers,
 * `timestamptz` as a `Date`, `json` parsed. Parameters are strings, numbers, bigints, booleans,
 * `Date`s or null.
 */
export interface Statement<Row> {
  readonly name: string;
  readonly text: string;
  /** Type only: the row shape. */
  readonly row?: Row;
}

export function statement<Row>(name: string, text: string): Statement<Row> {
  return { name, text };
}

/**
 * `alias.column as "prefix.key"` for each of `columns` (a Drizzle table's, or some of them): a
 * select list made from the schema, whose rows `fromColumns` turns back into the table's row type.
 */
export function columnList(alias: string, prefix: string, columns: Record<string, Column>): string {
  return Object.entries(columns)
    .map(([key, column]) => `${alias}."${column.name}" as "${prefix}.${key}"`)
    .join(', ');
}

/**
 * The `prefix` columns of a row selected with `columnList`, each value decoded by its Drizzle
 * column as the query builder would; undefined when they are all null (an outer join that found
 * nothing).
 */
export function fromColumns<T>(
  row: Record<string, unknown>,
  prefix: string,
  columns: Record<string, Column>,
): T | undefined {
  const out: Record<string, unknown> = {};
  let found = false;
  for (const [key, column] of Object.entries(columns)) {
    const value = row[`${prefix}.${key}`];
    if (value !== null && value !== undefined) found = true;
    out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return found ? (out as T) : undefined;
}

/** A parameter as the text PostgreSQL parses, the same for both drivers. */
export function parameterText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object' || typeof value === 'function' || typeof value === 'symbol') {
    throw new TypeError(`a statement parameter must be a scalar or a Date, not ${typeof value}`);
  }
  return String(value);
}
