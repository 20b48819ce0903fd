import type { Finding, ScanNote, ScanReport } from '../../scan/types.js';

const TIER_WORDS: Record<Finding['tier'], string> = {
  blocking: 'blocks sale',
  disclosed: 'disclosed to buyers',
  review: 'for your review',
};

/** The full trust report of one release: the verdict, what the code can do, every finding with path and line. */
export function ScanReportView({ report }: { report: ScanReport | null | undefined }) {
  if (!report) return <p class="muted">The scan has not finished yet.</p>;
  const { counts, capabilities, findings, checks } = report;
  return (
    <div class="scan-report">
      <p>
        <Verdict verdict={report.verdict} /> {counts.blocking} blocking, {counts.disclosed} disclosed,{' '}
        {counts.review} for review · {report.files_scanned} files scanned · scanner {report.scanner_version}
      </p>
      <p>
        <strong>What it can do:</strong> {capabilities.summary}
      </p>
      {findings.length === 0 ? (
        <p class="muted">No findings.</p>
      ) : (
        <ul class="findings" aria-label="Findings">
          {findings.map((finding, index) => (
            <li
              key={`${finding.rule_id}-${finding.path}-${finding.line}-${index}`}
              class={`finding tier-${finding.tier}`}
            >
              <p>
                <span class={`badge tier-${finding.tier}`}>{finding.tier}</span>
                <span class="visually-hidden"> ({TIER_WORDS[finding.tier]})</span> <Where finding={finding} />{' '}
                <span class="muted small">
                  <code>{finding.rule_id}</code> · {finding.severity.toLowerCase()}
                </span>
              </p>
              <p>
                {finding.description}
                {finding.hint ? <span class="muted"> ({finding.hint})</span> : null}
                {finding.source ? <span class="muted"> · {finding.source}</span> : null}
              </p>
            </li>
          ))}
        </ul>
      )}
      <AllowedExamples notes={report.notes ?? []} omitted={report.notes_omitted ?? 0} />
      <details>
        <summary>Checks ({checks.length})</summary>
        <ul>
          {checks.map((check) => (
            <li key={check.id}>
              <code>{check.id}</code>: {check.status} ({check.tool} {check.tool_version}
              {check.packages !== undefined ? `, ${check.packages} packages` : ''})
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

/**
 * What the secret check let through as documented examples: shown so that an allowed value is never
 * a surprise, and so a real key that happens to read like an example is caught by its creator.
 */
function AllowedExamples({ notes, omitted }: { notes: ScanNote[]; omitted: number }) {
  if (notes.length === 0) return null;
  return (
    <div class="scan-notes">
      <p>
        <strong>Allowed as examples:</strong> these look like credentials but read as documented examples or
        placeholders, so they do not block the sale. Make sure none of them is a real key.
      </p>
      <ul aria-label="Allowed as examples">
        {notes.map((note) => (
          <li key={`${note.rule_id}-${note.path}-${note.line}`}>
            <code class="where">
              {note.path}:{note.line}
            </code>{' '}
            {note.description} <span class="muted">({note.hint})</span>: {note.reason}.
          </li>
        ))}
      </ul>
      {omitted > 0 ? <p class="muted small">And {omitted} more like these.</p> : null}
    </div>
  );
}

/** Where a finding is: a file and line, a dependency, or nothing (the whole release). */
function Where({ finding }: { finding: Finding }) {
  if (finding.path) {
    return (
      <code class="where">
        {finding.path}
        {finding.line ? `:${finding.line}` : ''}
      </code>
    );
  }
  if (finding.package) {
    return (
      <code class="where">
        {finding.package.name}@{finding.package.version ?? '?'}
      </code>
    );
  }
  return null;
}

export function Verdict({ verdict }: { verdict: string }) {
  return <span class={`badge verdict-${verdict}`}>{verdict}</span>;
}
