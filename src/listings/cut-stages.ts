/**
 * The stages a release cut passes while it runs, in order: the snapshot (the zip and the pending
 * release row), the analysis (the tree and every file read off the event loop), the scan (the
 * dependency, advisory and originality checks on the database) and the attestation (the verdict
 * signed and recorded). A cut's stage only moves forward (`markCutStage`), so stages that come to
 * overlap still show the furthest one reached.
 *
 * Here rather than in releases/ because the Release schema is declared in listings/ (which may
 * not import releases/), and pure so that the creator app's bundle can share the words.
 */
export const CUT_STAGES = ['snapshot', 'analysis', 'scan', 'attestation'] as const;
export type CutStage = (typeof CUT_STAGES)[number];

/** What a cut is doing in each stage, as the manifest page and the creator app say it. */
export const CUT_STAGE_WORDS: Record<CutStage, string> = {
  snapshot: 'Checking the tagged commit against the size limits…',
  // The zip is built beside the analysis (docs/DECISIONS.md, D-188).
  analysis: 'Zipping the snapshot and reading every file for secrets, hidden Unicode and capabilities…',
  scan: 'Checking dependencies against known vulnerabilities and malware…',
  attestation: 'Signing the attestation and recording the verdict…',
};
