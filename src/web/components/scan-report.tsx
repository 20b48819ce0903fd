import type { Finding, ScanReport } from '../../scan/types.js';

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
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">Findings</caption>
            <thead>
              <tr>
                <th scope="col">Tier</th>
                <th scope="col">Where</th>
                <th scope="col">Rule</th>
                <th scope="col">Severity</th>
                <th scope="col">What</th>
              </tr>
            </thead>
            <tbody>
              {findings.map((finding, index) => (
                <tr
                  key={`${finding.rule_id}-${finding.path}-${finding.line}-${index}`}
                  class={`tier-${finding.tier}`}
                >
                  <td>
                    <span class={`badge tier-${finding.tier}`}>{finding.tier}</span>
                    <span class="visually-hidden"> ({TIER_WORDS[finding.tier]})</span>
                  </td>
                  <td>
                    {finding.path ? (
                      <code>
                        {finding.path}
                        {finding.line ? `:${finding.line}` : ''}
                      </code>
                    ) : finding.package ? (
                      <code>
                        {finding.package.name}@{finding.package.version ?? '?'}
                      </code>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    <code>{finding.rule_id}</code>
                  </td>
                  <td>{finding.severity}</td>
                  <td>
                    {finding.description}
                    {finding.hint ? <span class="muted"> ({finding.hint})</span> : null}
                    {finding.source ? <span class="muted"> · {finding.source}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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

export function Verdict({ verdict }: { verdict: string }) {
  return <span class={`badge verdict-${verdict}`}>{verdict}</span>;
}
