import { Feed } from 'feed';
import { renderToString } from 'preact-render-to-string';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { isReservedHandle } from '../identity/handles.js';
import { type Prebuilt, prebuilt, sendPrebuilt } from '../platform/http/prebuilt.js';
import { errorResponses, OwnerSlugParams } from '../platform/http/schemas.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';
import { formatUsd } from '../platform/money/usd.js';
import { publicReleaseLog, type ReleaseLogBody } from '../releases/service.js';
import { releaseFeedUrl } from '../releases/views.js';
import { listingUrls } from './manifest.js';

/**
 * GET /{owner}/{slug}/releases.atom: the release log's first page (the newest 50 releases, failing
 * ones too) as an Atom feed (RFC 4287), so a holder's feed reader hears of a new version without
 * polling the JSON log. Built with `feed` from the same cached log body the JSON route serves, once
 * per change of that body, and served with an ETag like the other public documents.
 */

export const ATOM_TYPE = 'application/atom+xml';
type Release = ReleaseLogBody['releases'][number];

export function registerReleaseFeed(app: App, ctx: AppContext): void {
  // Keyed by the cached log body: a new body (the listing changed) is a new feed.
  const feeds = new WeakMap<ReleaseLogBody, Prebuilt>();
  app.get(
    '/:owner/:slug/releases.atom',
    {
      config: rateLimitConfig(ctx.config, 'public'),
      schema: {
        tags: ['public'],
        summary: 'The release log as an Atom feed (RFC 4287): every release, failing ones too, newest first',
        params: OwnerSlugParams,
        response: {
          200: z.string().meta({ description: ATOM_TYPE }),
          304: z.null().meta({ description: 'Not modified (If-None-Match matched the ETag)' }),
          ...errorResponses('not_found', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const { owner, slug } = request.params;
      if (isReservedHandle(owner)) return reply.callNotFound();
      const { body } = await publicReleaseLog(ctx, owner, slug);
      let doc = feeds.get(body);
      if (!doc) {
        doc = prebuilt(releaseFeed(ctx.config.baseUrl, body), `${ATOM_TYPE}; charset=utf-8`);
        feeds.set(body, doc);
      }
      return sendPrebuilt(request, reply, doc, 'public, max-age=60');
    },
  );
}

/** The Atom document of one page of the release log. */
export function releaseFeed(baseUrl: string, log: ReleaseLogBody): string {
  const name = `${log.owner}/${log.slug}`;
  const urls = listingUrls(baseUrl, log.owner, log.slug);
  const self = releaseFeedUrl(baseUrl, log.owner, log.slug);
  const dates = log.releases.map(entryUpdated);
  const feed = new Feed({
    id: self,
    title: `${name} releases`,
    description: `Every release of ${name} on repo402, failing ones too: version, changelog, scan verdict, changes and attestation.`,
    link: urls.page,
    feedLinks: { atom: self, json: urls.releases },
    updated: dates.length > 0 ? new Date(Math.max(...dates.map((date) => date.getTime()))) : new Date(0),
    author: { name: log.owner, link: `${baseUrl}/${log.owner}` },
    copyright: `Releases of ${name}`,
    generator: 'repo402',
  });
  for (const [index, release] of log.releases.entries()) {
    feed.addItem({
      // A release's version never changes and is never deleted: its address is its identity.
      id: `${urls.page}#release-${release.version}`,
      link: release.attestation_url ?? urls.releases,
      title: `${name} ${release.version}: ${verdictWords(release)}`,
      description: summary(release),
      content: entryHtml(release),
      date: dates[index]!,
      published: new Date(release.published_at),
    });
  }
  return feed.atom1();
}

/** A release's entry changes when its verdict, an advisory flag or a yank is recorded after it was cut. */
function entryUpdated(release: Release): Date {
  const times = [release.published_at, release.advisory_flag?.flagged_at, release.yanked?.yanked_at].filter(
    (time): time is string => time !== undefined,
  );
  return new Date(Math.max(...times.map((time) => Date.parse(time))));
}

function verdictWords(release: Release): string {
  if (release.yanked) return `withdrawn by the operator ${release.yanked.yanked_at.slice(0, 10)}, not sold`;
  if (release.scan === 'pass') return release.advisory_flag ? 'scan passed, since flagged' : 'scan passed';
  if (release.scan === 'fail') return 'scan failed, not sold';
  return 'being inspected';
}

function diffWords(release: Release): string {
  const diff = release.diff_summary;
  if (!diff) return 'No diff summary.';
  const parts = [
    `${diff.files_added} files added`,
    `${diff.files_changed} changed`,
    `${diff.files_removed} removed`,
    `+${diff.additions} −${diff.deletions} lines`,
  ];
  const touched = diff.components_touched.length > 0 ? `; touches ${diff.components_touched.join(', ')}` : '';
  return `${parts.join(', ')}${touched}.`;
}

/** The entry's summary: `feed` marks it HTML, so its text (the changelog's first line) is escaped. */
function summary(release: Release): string {
  const firstLine = release.changelog.split('\n')[0] ?? '';
  return renderToString(
    <>
      {`Version ${release.version} (${release.tag}), ${verdictWords(release)}. ${diffWords(release)} ${firstLine}`.trim()}
    </>,
  );
}

/** The entry's HTML content; Preact escapes the changelog and every other value. */
function entryHtml(release: Release): string {
  return renderToString(
    <div>
      <p>
        Version <code>{release.version}</code> (tag <code>{release.tag}</code>, commit{' '}
        <code>{release.commit_sha.slice(0, 12)}</code>), published {release.published_at}.
      </p>
      <p>
        Scan verdict: <strong>{release.scan}</strong>
        {release.advisory_flag
          ? ` (flagged ${release.advisory_flag.flagged_at.slice(0, 10)} by ${release.advisory_flag.advisory_ids.join(', ')})`
          : ''}
        .
      </p>
      {release.yanked ? (
        <p>
          Withdrawn by the operator on {release.yanked.yanked_at.slice(0, 10)}: {release.yanked.reason}. It is
          no longer sold or served; its holders fetch the version on sale free.
        </p>
      ) : null}
      <p>Changes: {diffWords(release)}</p>
      <p>
        Price in force:{' '}
        {release.price_micro === null ? 'not sold' : `${formatUsd(BigInt(release.price_micro))} USDC`}; update
        price {formatUsd(BigInt(release.update_price_micro))} USDC.
      </p>
      {release.attestation_url ? (
        <p>
          Attestation: <a href={release.attestation_url}>{release.attestation_url}</a>
        </p>
      ) : (
        <p>Attestation: follows the verdict.</p>
      )}
      <h3>Changelog</h3>
      <pre>{release.changelog}</pre>
    </div>,
  );
}
