import type { CutStage } from '../listings/cut-stages.js';
import type { ScanReport } from '../scan/types.js';

/** The parts of the service's Listing and ListingRelease documents the app reads (see the OpenAPI document). */

/** How far a running cut has got (`CutStage` in the OpenAPI document). */
export interface CutStageView {
  name: CutStage;
  entered_at: string;
}

export interface ListingRelease {
  version: string;
  tag: string;
  commit_sha: string;
  artifact_sha256: string | null;
  published_at: string;
  changelog: string;
  diff_summary: {
    files_added: number;
    files_changed: number;
    files_removed: number;
    [field: string]: unknown;
  } | null;
  scan: 'pending' | 'pass' | 'fail';
  scanner_version: string | null;
  analyzer_version: string | null;
  price_micro: string | null;
  update_price_micro: string;
  scan_report?: ScanReport | null;
  /** While `scan` is `pending`. */
  stage?: CutStageView;
}

export interface Listing {
  id: string;
  owner: string;
  slug: string;
  source: 'hosted' | 'github';
  status: 'draft' | 'published' | 'retired';
  pricing: { price_micro: string | null; update_price_micro: string };
  description: string;
  trigger_hint: string;
  licence: string | null;
  created_at: string;
  published_at: string | null;
  retired_at: string | null;
  remote?: string;
  default_branch?: string;
  host_key_fingerprints?: Array<{ type: string; sha256: string }>;
  deploy_key_fingerprint?: string | null;
  github?: { repo: string; state: 'ok' | 'unreachable' | 'public'; reason: string | null };
  cuts?: Array<{
    version: string;
    tag: string;
    commit_sha: string;
    trigger: 'push' | 'sync';
    state: 'queued' | 'failed';
    failure_reason: string | null;
    requested_at: string;
    /** Once a queued cut's job has started. */
    stage?: CutStageView;
  }>;
  /** The newest passing release (the one on sale once published). */
  latest_release: ListingRelease | null;
  /** The newest release of any verdict, only when it is not `latest_release`. */
  newest_release?: ListingRelease;
}
