import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';
import { connectDatabase, type DatabaseTarget } from './connect.js';

type Location = Pick<Config, 'dataDir' | 'databaseUrl'>;
type ConfiguredTarget = Extract<DatabaseTarget, { kind: 'postgres' | 'pglite' }>;

/** The database the configuration names: PostgreSQL at DATABASE_URL, otherwise PGlite in DATA_DIR. */
export function configuredDatabase(config: Location): ConfiguredTarget {
  return config.databaseUrl
    ? { kind: 'postgres', url: config.databaseUrl }
    : { kind: 'pglite', dataDir: path.join(config.dataDir, 'db') };
}

export class NoDatabaseError extends Error {
  constructor(config: Location, socketPath: string) {
    const where = config.databaseUrl
      ? `DATABASE_URL=${withoutPassword(config.databaseUrl)} has no repo402 schema yet (DATA_DIR=${config.dataDir})`
      : `No database in DATA_DIR=${config.dataDir}`;
    super(
      `${where} and no repo402 server answers on ${socketPath}; nothing was created. ` +
        "Run the command with the server's DATA_DIR (and its DATABASE_URL, if it has one), " +
        'or add --init to create a new database there.',
    );
    this.name = 'NoDatabaseError';
  }
}

/**
 * Refuses, creating nothing, when the configured database does not exist yet. An operator command
 * run without the server's DATA_DIR would otherwise create a database of its own and act on it
 * (an invite code the server never sees); the server and `migrate` create theirs, so they skip this.
 */
export async function requireExistingDatabase(config: Location, socketPath: string): Promise<void> {
  if (!(await databaseExists(configuredDatabase(config)))) throw new NoDatabaseError(config, socketPath);
}

/** A PGlite data directory that PostgreSQL initialised, or a PostgreSQL database the migrations ran in. */
async function databaseExists(target: ConfiguredTarget): Promise<boolean> {
  if (target.kind === 'pglite') {
    return access(path.join(target.dataDir, 'PG_VERSION')).then(
      () => true,
      () => false,
    );
  }
  const database = await connectDatabase({ ...target, poolSize: 1 });
  try {
    const { rows } = await database.query<{ migrated: boolean }>(
      `select to_regclass('drizzle.__drizzle_migrations') is not null as migrated`,
    );
    return rows[0]?.migrated === true;
  } finally {
    await database.close();
  }
}

/** DATABASE_URL as it may appear in a message. */
function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
