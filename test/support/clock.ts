import type { Clock } from '../../src/platform/clock.js';

/** A clock tests move by hand, for expiry rules. */
export class ManualClock implements Clock {
  private current: Date;

  constructor(start = new Date('2026-11-22T12:00:00.000Z')) {
    this.current = new Date(start);
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }

  set(at: Date): void {
    this.current = new Date(at);
  }
}
