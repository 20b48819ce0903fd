import { api } from '../api.js';
import { when } from '../format.js';
import { useLoad } from '../use-load.js';

interface Notice {
  id: number;
  at: string;
  type: string;
  listing: string | null;
  text: string;
}

/**
 * What the operator did to the creator's listings (a version withdrawn, a suspension) and reports
 * about them, newest first; nothing at all when there is none. A failure to load stays quiet: the
 * page around it works without.
 */
export function Notices() {
  const notices = useLoad(() => api<{ notices: Notice[] }>('GET', '/creators/me/notices'), 'notices');
  const items = notices.data?.notices ?? [];
  if (items.length === 0) return null;
  return (
    <section id="notices" aria-label="Notices from the operator">
      <h2>Notices</h2>
      <ul>
        {items.map((notice) => (
          <li key={notice.id} data-notice={notice.type}>
            <span class="muted small">{when(notice.at)}</span> {notice.text}
          </li>
        ))}
      </ul>
    </section>
  );
}
