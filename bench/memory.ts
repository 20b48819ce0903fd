import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import autocannon from 'autocannon';
import type { BenchRoute } from './routes.js';

/** Resident size now and its peak so far, in MiB, of one process (Linux /proc). */
export interface Resident {
  rssMb: number;
  hwmMb: number;
}

export async function resident(pid: number): Promise<Resident> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: Math.round(kib('VmRSS') / 1024), hwmMb: Math.round(kib('VmHWM') / 1024) };
}

/**
 * `count` requests cycling over `routes`, 50 at a time. Resolves with the answers counted by
 * status (one route in nine is the 402) and the transport errors.
 */
export async function mixedRequests(
  base: string,
  routes: BenchRoute[],
  count: number,
): Promise<{ statuses: Record<string, number>; errors: number }> {
  const result = await autocannon({
    url: base,
    connections: 50,
    amount: count,
    requests: routes.map((route) => ({ ...route.request })),
  });
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([status, stats]) => [status, stats.count ?? 0]),
  );
  return { statuses, errors: result.errors + result.timeouts };
}

export interface DownloadFigures {
  megabytes: number;
  seconds: number;
  /** Resident size sampled every 50 ms while the body streamed. */
  peakDuringMb: number;
  sha256Matches: boolean;
}

/**
 * Takes the grant of a free listing (`GET /api/r/{owner}/{slug}` answers 200 at once) and streams
 * its zip, reading the server's resident size as the bytes flow; the bytes are hashed and dropped.
 */
export async function downloadWhileSampling(
  base: string,
  pid: number,
  listing: { owner: string; slug: string },
): Promise<DownloadFigures> {
  const grantResponse = await fetch(`${base}/api/r/${listing.owner}/${listing.slug}`);
  if (grantResponse.status !== 200)
    throw new Error(`the free listing answered ${grantResponse.status}: ${await grantResponse.text()}`);
  const grant = (await grantResponse.json()) as { download_url: string; artifact_sha256: string };
  let peak = 0;
  const sampler = setInterval(() => {
    void resident(pid).then((now) => {
      peak = Math.max(peak, now.rssMb);
    });
  }, 50);
  try {
    const started = performance.now();
    const response = await fetch(grant.download_url);
    if (response.status !== 200 || !response.body)
      throw new Error(`the download answered ${response.status}`);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of Readable.fromWeb(response.body as ReadableStream)) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    return {
      megabytes: Math.round(bytes / 1024 / 1024),
      seconds: (performance.now() - started) / 1000,
      peakDuringMb: peak,
      sha256Matches: hash.digest('hex') === grant.artifact_sha256,
    };
  } finally {
    clearInterval(sampler);
  }
}
