/** Time as a dependency, so expiry rules (challenges, grants, quotes, 48-hour changes) are testable. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
