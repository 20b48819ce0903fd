import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a cached read (milliseconds) to a settlement that waits on the chain. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SETTLEMENT_BUCKETS = [0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60];
const CUT_BUCKETS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800];

/** One sample of a gauge read when scraped: its labels and value. */
export interface GaugeSample {
  labels?: Record<string, string>;
  value: number;
}

/**
 * This process's metrics (docs/OPERATIONS.md, "Metrics"), in a registry of its own so that every
 * context (and every test app in one process) counts apart. Counters cost an addition; what needs a
 * query (payments awaiting settlement, queue depths) is read only when scraped, and the per-request
 * histogram and process metrics are installed only when an operator exposes them (`exposed`).
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'repo402_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'repo402_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer sent, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  readonly purchases = new Counter({
    name: 'repo402_purchases_total',
    help: 'Purchase requests by outcome (new, update, free, owned, payment_required, refused) and, when refused, error code',
    labelNames: ['outcome', 'code'] as const,
    registers: [this.registry],
  });
  readonly settlementDuration = new Histogram({
    name: 'repo402_settlement_duration_seconds',
    help: "One settlement attempt, from sending the facilitator's settle to its recorded outcome (settled, failed, pending)",
    labelNames: ['outcome'] as const,
    buckets: SETTLEMENT_BUCKETS,
    registers: [this.registry],
  });
  readonly reconcilerRuns = new Counter({
    name: 'repo402_reconciler_runs_total',
    help: 'Runs of the settlement reconciler',
    registers: [this.registry],
  });
  readonly reconcilerDecisions = new Counter({
    name: 'repo402_reconciler_decisions_total',
    help: 'Payments the reconciler concluded, by decision (settled, failed, pending)',
    labelNames: ['decision'] as const,
    registers: [this.registry],
  });
  readonly cuts = new Counter({
    name: 'repo402_release_cuts_total',
    help: 'Release cuts finished, by verdict (pass, warn, fail) or error when a cut failed for good',
    labelNames: ['verdict'] as const,
    registers: [this.registry],
  });
  readonly cutDuration = new Histogram({
    name: 'repo402_release_cut_duration_seconds',
    help: 'From the tag received to the verdict recorded, by verdict',
    labelNames: ['verdict'] as const,
    buckets: CUT_BUCKETS,
    registers: [this.registry],
  });
  readonly sshConnections = new Gauge({
    name: 'repo402_ssh_connections_open',
    help: 'SSH connections open now',
    registers: [this.registry],
  });
  readonly sshRefusals = new Counter({
    name: 'repo402_ssh_refusals_total',
    help: 'SSH connections or commands refused, by reason (a connection cap, unknown_key, bad_signature, paused, access, internal)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly rateLimitRefusals = new Counter({
    name: 'repo402_rate_limit_refusals_total',
    help: 'Requests refused with 429 rate_limited, by route template',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly facilitatorErrors = new Counter({
    name: 'repo402_facilitator_errors_total',
    help: 'Facilitator requests that failed (no answer, or an error status), by operation (verify, settle, supported)',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly chainErrors = new Counter({
    name: 'repo402_chain_errors_total',
    help: 'Chain reads or transactions that failed, by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  readonly payouts = new Counter({
    name: 'repo402_payouts_total',
    help: 'Payout transfers by outcome (sent, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private defaultsInstalled = false;
  /** Children bound once: the 402 path counts without building a label key per request. */
  private readonly purchaseOutcomes = new Map<string, { inc(): void }>();

  /** One purchase request's outcome: a grant's kind, `payment_required`, or `refused` with its code. */
  countPurchase(outcome: string, code = ''): void {
    const key = `${outcome} ${code}`;
    let child = this.purchaseOutcomes.get(key);
    if (!child) {
      child = this.purchases.labels(outcome, code);
      this.purchaseOutcomes.set(key, child);
    }
    child.inc();
  }

  /** A gauge whose samples `read` gives when scraped (a failed read leaves it without samples). */
  readGauge(name: string, help: string, labelNames: string[], read: () => Promise<GaugeSample[]>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        // A scrape answers with what it can: one unreadable gauge must not hide every other metric.
        const samples = await read().catch(() => []);
        for (const sample of samples) {
          if (sample.labels) this.set(sample.labels, sample.value);
          else this.set(sample.value);
        }
      },
    });
  }

  /** Node's process metrics (CPU, memory, event-loop delay, GC), for a process that exposes its metrics. */
  collectProcessMetrics(): void {
    if (this.defaultsInstalled) return;
    this.defaultsInstalled = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /** The text exposition format, and its content type. */
  async exposition(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** Seconds since `startMs` (a `performance.now()` reading). */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}
