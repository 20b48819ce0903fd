import type { Cadence } from './cadence.js';
import type { ComponentKind } from './components.js';
import type { Dependency } from './dependencies.js';
import type { LicenceResult } from './licence.js';
import type { Originality } from './originality.js';

export interface Engineering {
  unique_5gram_ratio: number;
  type_token_ratio: number;
  effective_code_lines: number;
  effective_doc_words: number;
  code_files: number;
  test_files: number;
  padding_suspected: boolean;
}

/** Every SPEC `computed` field except `scan` (the manifest builder adds `toPublicScan(scan)`). */
export interface Computed {
  artifact_class: string;
  component_inventory: Array<{ kind: ComponentKind; count: number }>;
  file_count: number;
  dir_depth: number;
  bytes_text: number;
  bytes_binary: number;
  lines_of_code: number;
  /** Bytes per language (vendored and generated files excluded). */
  languages: Record<string, number>;
  tree: Array<{ path: string; size: number; binary: boolean }>;
  readme_html: string;
  dependencies: Dependency[];
  licence: LicenceResult;
  cadence_sentence: string;
  inventory_sentence: string;
  originality: Originality;
  engineering: Engineering;
  cadence: Cadence;
  extensions: Record<string, number>;
  warnings: string[];
  /** Hosting metadata; null on the hosted rail (the GitHub rail fills it from the API). */
  repo_meta: Record<string, unknown> | null;
  owner: Record<string, unknown> | null;
  computed_at: string;
  analyzer_version: string;
}
