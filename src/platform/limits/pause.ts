import { eq } from 'drizzle-orm';
import type { Db } from '../../db/connect.js';
import { platformSettings } from '../../db/schema/index.js';

const KEY = 'paused';

/**
 * The operator's `paused` switch: on from config (`PAUSED=true`) or from the database, where
 * `repo402 pause` puts it so that every API process sees it within one refresh interval.
 */
export class PauseSwitch {
  private fromDatabase = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly fromConfig: boolean,
  ) {}

  get paused(): boolean {
    return this.fromConfig || this.fromDatabase;
  }

  async refresh(): Promise<void> {
    const [row] = await this.db.select().from(platformSettings).where(eq(platformSettings.key, KEY));
    this.fromDatabase = row?.value === true;
  }

  async set(paused: boolean): Promise<void> {
    await this.db
      .insert(platformSettings)
      .values({ key: KEY, value: paused })
      .onConflictDoUpdate({ target: platformSettings.key, set: { value: paused, updatedAt: new Date() } });
    this.fromDatabase = paused;
  }

  /** Polls the database so a switch flipped by another process reaches this one. */
  start(intervalMs = 2000): void {
    this.timer = setInterval(() => {
      this.refresh().catch(() => {
        // Keep the last known state while the database is unreachable; health reports the outage.
      });
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
