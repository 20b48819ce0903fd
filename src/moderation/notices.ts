import type { AppContext } from '../context.js';
import type { DomainEventRow } from './store.js';
import { recentEventsOf } from './store.js';

/** What a creator is told in their app: the domain events of their listings, in words for a person. */
export interface Notice {
  id: number;
  at: string;
  type: string;
  listing: string | null;
  text: string;
}

const CATEGORY_WORDS: Record<string, string> = {
  malware: 'malware',
  secret_exposed: 'an exposed secret',
  copyright: 'a copyright claim',
  other: 'another problem',
};

/** One event as a sentence to its creator: what happened and what they can do. */
export function noticeText(type: string, data: Record<string, unknown>): string {
  const listing = String(data.listing ?? '');
  const reason = String(data.reason ?? '');
  switch (type) {
    case 'release.yanked':
      return `The operator withdrew version ${data.version} of ${listing}: ${reason}. It is no longer sold or downloadable; buyers who own it get your newest good version free. Your newest version that passed and is not withdrawn is the one on sale; push a fixed version to replace it.`;
    case 'release.unyanked':
      return `The operator restored version ${data.version} of ${listing}: ${reason}. It can be downloaded again.`;
    case 'listing.suspended':
      return `The operator suspended ${listing}: ${reason}. Nothing is sold and pushes are refused until the operator lifts it; buyers keep what they own. Reply to the operator through your abuse contact.`;
    case 'listing.unsuspended':
      return `The operator lifted the suspension of ${listing}: ${reason}. It is on sale again.`;
    case 'creator.suspended':
      return `The operator suspended your account: ${reason}.`;
    case 'creator.unsuspended':
      return `The operator lifted the suspension of your account: ${reason}.`;
    case 'report.received':
      return `Someone reported ${listing}${data.version ? ` version ${data.version}` : ''} for ${CATEGORY_WORDS[String(data.category)] ?? 'a problem'}. The operator will review it; nothing changes unless they act.`;
    case 'report.resolved':
      return `The operator closed a report about ${listing}: ${String(data.note ?? '')}`;
    default:
      return `Something changed on ${listing || 'your account'}.`;
  }
}

function noticeOf(row: DomainEventRow): Notice {
  const data = row.data as Record<string, unknown>;
  return {
    id: row.id,
    at: row.at.toISOString(),
    type: row.type,
    listing: typeof data.listing === 'string' ? data.listing : null,
    text: noticeText(row.type, data),
  };
}

export const NOTICES_SHOWN = 50;

/** The creator's newest notices, newest first. */
export async function noticesOf(ctx: Pick<AppContext, 'database'>, creatorId: string): Promise<Notice[]> {
  return (await recentEventsOf(ctx.database.db, creatorId, NOTICES_SHOWN)).map(noticeOf);
}
