#!/usr/bin/env node
import path from 'node:path';
import closeWithGrace from 'close-with-grace';
import { Command, InvalidArgumentError } from 'commander';
import { type Config, ConfigError, loadConfig } from './config.js';
import type { OperationName, operations } from './operations.js';
import { callControl, controlSocketPath } from './platform/control.js';
import { VERSION } from './platform/version.js';
import type { ImportResult } from './scan/advisory-import.js';

/**
 * The runtime (database, jobs, every domain) is imported by the commands that use it, never at
 * start: `repo402 verify`, which buyers run, and `--help` start without loading the service.
 */
const loadRuntime = () => import('./runtime.js');

/**
 * Runs an operator command in the running server when there is one (through its control socket),
 * otherwise in this process, on a database that exists already unless `--init` (or `migrate`)
 * says to create it. Only the command's result goes to stdout.
 */
async function runOperation<N extends OperationName>(
  name: N,
  args: Parameters<(typeof operations)[N]['run']>[1],
  { init = program.opts<{ init?: boolean }>().init } = {},
): Promise<unknown> {
  const config = loadConfig();
  const socketPath = controlSocketPath(config.dataDir);
  const remote = await callControl(socketPath, name, args);
  if (remote) return remote.result;
  if (!init) await (await import('./db/existing.js')).requireExistingDatabase(config, socketPath);
  const [{ createContext }, { operations }] = await Promise.all([loadRuntime(), import('./operations.js')]);
  // Log lines (a failed advisory download, say) go to stderr: stdout carries only the result.
  const runtime = await createContext(config, { logDestination: process.stderr });
  try {
    const operation = operations[name];
    return await operation.run(runtime.ctx, operation.args.parse(args) as never);
  } finally {
    await runtime.close();
  }
}

interface Running {
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  close(): Promise<void>;
}

/**
 * Installs the signal handlers before start-up begins: a SIGTERM that arrives while the process is
 * still starting (health may already answer) waits for start-up, then shuts down cleanly.
 */
async function runUntilSignalled(config: Config, start: () => Promise<Running>): Promise<void> {
  const starting = start();
  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    const running = await starting.catch(() => undefined);
    if (!running) return;
    if (err) running.log.error({ err }, 'shutting down after an unhandled error');
    else running.log.info({ signal }, 'shutting down');
    await running.close();
  });
  await starting;
}

function serve(config: Config): Promise<void> {
  return runUntilSignalled(config, async () => {
    // Imported here so operator commands start without loading the whole HTTP application.
    const { startServer } = await import('./server.js');
    const server = await startServer(config);
    return { log: server.app.log, close: () => server.close() };
  });
}

/** Job workers without the HTTP API, for deployments that scale workers separately. */
function worker(config: Config): Promise<void> {
  return runUntilSignalled(config, async () => {
    const { createContext } = await loadRuntime();
    const { startOperatorSocket } = await import('./operations.js');
    const { startMetricsListener } = await import('./platform/metrics/exposition.js');
    const runtime = await createContext(config, { jobs: 'workers' });
    // `repo402 ready` (and the other operator commands) reach it on its DATA_DIR's socket.
    const control = await startOperatorSocket(runtime.ctx);
    const close = async () => {
      runtime.ctx.pause.stop();
      await metrics?.close();
      await control?.close();
      await runtime.close();
    };
    let metrics: Awaited<ReturnType<typeof startMetricsListener>>;
    try {
      metrics = await startMetricsListener(runtime.ctx);
    } catch (error) {
      await close();
      throw error;
    }
    runtime.ctx.pause.start();
    runtime.ctx.log.info(
      { database: runtime.ctx.database.driver, metrics: metrics?.address },
      'repo402 worker is up',
    );
    return { log: runtime.ctx.log, close };
  });
}

/** The process that keeps the hosted repositories, for API processes started with GIT_HOST_URL. */
function gitHost(config: Config): Promise<void> {
  return runUntilSignalled(config, async () => {
    const { startGitHost } = await import('./git-host.js');
    const host = await startGitHost(config);
    return { log: host.runtime.ctx.log, close: () => host.close() };
  });
}

/** The devnet chain and facilitator over HTTP, for processes in mainnet mode to share. */
function devnetServe(config: Config): Promise<void> {
  return runUntilSignalled(config, async () => {
    const { startDevnetServer } = await import('./devnet/serve.js');
    const { startOperatorSocket } = await import('./operations.js');
    const { createContext } = await loadRuntime();
    const runtime = await createContext(config, { openPayments: true });
    try {
      const server = await startDevnetServer(runtime.ctx, config);
      // `repo402 devnet fund` with this DATA_DIR mints on this chain.
      const control = await startOperatorSocket(runtime.ctx);
      return {
        log: runtime.ctx.log,
        async close() {
          await control?.close();
          await server.close();
          await runtime.close();
        },
      };
    } catch (error) {
      await runtime.close();
      throw error;
    }
  });
}

function positiveCount(value: string): number {
  const count = Number(value);
  if (!/^[0-9]+$/.test(value) || count < 1 || count > 1000) {
    throw new InvalidArgumentError('expected an integer from 1 to 1000');
  }
  return count;
}

function pastTime(value: string): Date {
  const time = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time.getTime())) {
    throw new InvalidArgumentError('expected an ISO 8601 time, e.g. 2026-11-28T03:00:00Z');
  }
  if (time.getTime() > Date.now()) throw new InvalidArgumentError('expected a time in the past');
  return time;
}

const program = new Command()
  .name('repo402')
  .description('Sell private git repositories as versioned zip artifacts over HTTP 402')
  .version(VERSION, '-V, --version', 'print the version of repo402 and stop')
  .option('--init', 'let an operator command create the database when none exists yet')
  .showHelpAfterError();

program
  .command('serve')
  .description('run the HTTP API and, unless WORKERS=false, the background job workers')
  .action(() => serve(loadConfig()));

program
  .command('worker')
  .description('run the background job workers only (several may run against one PostgreSQL)')
  .action(() => worker(loadConfig()));

program
  .command('git-host')
  .description(
    'run the git host: SSH, the hosted repositories and their release cuts, for API processes started with GIT_HOST_URL',
  )
  .action(() => gitHost(loadConfig()));

program
  .command('migrate')
  .description('apply the committed database migrations')
  .action(async () => {
    await runOperation('migrate', {}, { init: true });
    process.stderr.write('migrations applied\n');
  });

program
  .command('invites')
  .description('manage registration invite codes')
  .command('create')
  .description('print new single-use invite codes, one per line')
  .option('--count <n>', 'how many codes', positiveCount, 1)
  .action(async (options: { count: number }) => {
    const codes = (await runOperation('invites.create', { count: options.count })) as string[];
    process.stdout.write(`${codes.join('\n')}\n`);
  });

const advisories = program
  .command('advisories')
  .description('manage the offline vulnerability and malware advisories');
advisories
  .command('import <source>')
  .description(
    'load OSV records: a JSON file (a record or an array), a directory of them, or an OSV export zip',
  )
  .action(async (source: string) => {
    const result = (await runOperation('advisories.import', {
      source: path.resolve(source),
    })) as ImportResult;
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
advisories
  .command('sync')
  .description(
    'fetch the OSV exports from OSV_URL now (as the hourly job does with OSV_SYNC) and import what changed',
  )
  .action(async () => {
    const result = (await runOperation('advisories.sync', {})) as { ecosystems: Array<{ outcome: string }> };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (result.ecosystems.some((e) => e.outcome === 'failed')) process.exitCode = 1;
  });

const devnet = program.command('devnet').description('the local devnet chain (PAYMENTS_MODE=devnet)');
devnet
  .command('serve')
  .description(
    'serve the devnet chain as a JSON-RPC node (/rpc) and an x402 facilitator (/facilitator) on HOST:PORT',
  )
  .action(() => devnetServe(loadConfig()));
devnet
  .command('fund <address> <micro-usdc>')
  .description('mint test USDC to an address; prints the transaction hash')
  .action(async (address: string, micro: string) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(address))
      throw new InvalidArgumentError('address: expected 0x and 40 hex digits');
    if (!/^(0|[1-9][0-9]{0,15})$/.test(micro))
      throw new InvalidArgumentError('micro-usdc: expected a decimal integer');
    const hash = (await runOperation('devnet.fund', { address, amountMicro: micro })) as string;
    process.stdout.write(`${hash}\n`);
  });

program
  .command('pause')
  .description('answer 503 paused on every route except health, in every process sharing the database')
  .action(async () => {
    await runOperation('pause.set', { paused: true });
    process.stderr.write('paused\n');
  });

program
  .command('ready')
  .description(
    'ask the process running on DATA_DIR (serve, worker or git-host) whether it can do its work: each dependency it uses and the pause, one per line; exit 0 when ready, 1 when not or when no process answers',
  )
  .action(async () => {
    const config = loadConfig();
    const answer = await callControl(controlSocketPath(config.dataDir), 'ready', {}).catch(() => undefined);
    if (!answer) {
      process.stderr.write(`not ready: no repo402 process answers on ${controlSocketPath(config.dataDir)}\n`);
      process.exit(1);
    }
    const state = answer.result as { ready: boolean; checks: Record<string, string>; paused: boolean };
    for (const [name, check] of Object.entries(state.checks)) process.stdout.write(`${name}: ${check}\n`);
    process.stdout.write(`paused: ${state.paused ? 'yes' : 'no'}\n${state.ready ? 'ready' : 'not ready'}\n`);
    process.exit(state.ready ? 0 : 1);
  });

program
  .command('resume')
  .description('undo pause (a PAUSED=true setting stays in force)')
  .action(async () => {
    const result = (await runOperation('pause.set', { paused: false })) as { paused: boolean };
    process.stderr.write(result.paused ? 'still paused by PAUSED=true in the environment\n' : 'resumed\n');
  });

program
  .command('backup <file>')
  .description(
    'write one archive (gzipped tar, mode 0600: it holds secrets) of the embedded database, the hosted repositories, local blobs, the app secret, the attestation key and the SSH host keys, with a manifest of checksums; consistent while the server runs',
  )
  .action(async (file: string) => {
    const { describeBackup } = await import('./backup/describe.js');
    const summary = (await runOperation('backup.create', { file: path.resolve(file) })) as Parameters<
      typeof describeBackup
    >[0];
    process.stdout.write(`${describeBackup(summary)}\n`);
    if (summary.manifest.database.kind === 'postgres') {
      process.stderr.write(
        'the database is PostgreSQL (DATABASE_URL): this archive does not hold it; take it with pg_dump at the same time\n',
      );
    }
  });

program
  .command('restore <file>')
  .description(
    'unpack a backup into an empty DATA_DIR after checking every file against its manifest; then start the server on it',
  )
  .action(async (file: string) => {
    const { restoreBackup } = await import('./backup/restore.js');
    const { describeRestore } = await import('./backup/describe.js');
    const summary = await restoreBackup(loadConfig(), file);
    process.stdout.write(`${describeRestore(summary)}\n`);
  });

program
  .command('reconcile')
  .description(
    'record the sales and payouts the chain shows since TIME that the database lacks (after restoring an older database): sales granted and credited, payouts recorded as sent so they are never paid again',
  )
  .requiredOption(
    '--since <time>',
    'an ISO 8601 time, e.g. 2026-11-28T03:00:00Z: when the backup was taken, or earlier',
    pastTime,
  )
  .action(async (options: { since: Date }) => {
    const result = await runOperation('chain.reconcile', { since: options.since.toISOString() });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });

// Moderation: the operator's answer to a report, narrower than `pause` (docs/OPERATIONS.md).
const reasonOption = [
  '--reason <text>',
  'why, in a sentence: kept in the audit log and shown to whom it touches',
] as const;
const releasesCommand = program.command('releases').description('yank a release, or restore it');
releasesCommand
  .command('yank <owner/slug> <version>')
  .description(
    'stop selling and serving one release: its download and re-fetch answer 410 release_yanked, the release log marks it, its holders get the newest passing release free',
  )
  .requiredOption(...reasonOption)
  .action(async (listing: string, version: string, options: { reason: string }) => {
    const result = await runOperation('releases.yank', { listing, version, reason: options.reason });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
releasesCommand
  .command('unyank <owner/slug> <version>')
  .description('undo a yank: the release is served again, and sold again if it is the newest passing one')
  .requiredOption(...reasonOption)
  .action(async (listing: string, version: string, options: { reason: string }) => {
    const result = await runOperation('releases.unyank', { listing, version, reason: options.reason });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
const listingsCommand = program.command('listings').description('suspend a listing, or lift its suspension');
listingsCommand
  .command('suspend <owner/slug>')
  .description(
    'stop selling a listing and refuse pushes to it; its page says why; holders keep what they own',
  )
  .requiredOption(...reasonOption)
  .action(async (listing: string, options: { reason: string }) => {
    const result = await runOperation('listings.suspend', { listing, reason: options.reason });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
listingsCommand
  .command('unsuspend <owner/slug>')
  .description("lift a listing's suspension")
  .requiredOption(...reasonOption)
  .action(async (listing: string, options: { reason: string }) => {
    const result = await runOperation('listings.unsuspend', { listing, reason: options.reason });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
const creatorsCommand = program.command('creators').description('suspend a creator, or lift the suspension');
creatorsCommand
  .command('suspend <handle>')
  .description('refuse the creator’s pushes, publishing and sign-in, and suspend every listing of theirs')
  .requiredOption(...reasonOption)
  .action(async (handle: string, options: { reason: string }) => {
    const result = await runOperation('creators.suspend', { handle, reason: options.reason });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
creatorsCommand
  .command('unsuspend <handle>')
  .description("lift a creator's suspension and the listing suspensions it brought")
  .requiredOption(...reasonOption)
  .action(async (handle: string, options: { reason: string }) => {
    const result = await runOperation('creators.unsuspend', { handle, reason: options.reason });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
const reportsCommand = program.command('reports').description('reports filed with POST /api/reports');
reportsCommand
  .command('list')
  .description('print open reports (with --all, resolved ones too), newest first, one JSON object a line')
  .option('--all', 'include resolved reports')
  .action(async (options: { all?: boolean }) => {
    const rows = (await runOperation('reports.list', { all: options.all ?? false })) as unknown[];
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
  });
reportsCommand
  .command('resolve <id>')
  .description('close a report with a note (audited; the creator is told)')
  .requiredOption('--note <text>', 'what was done about it')
  .action(async (id: string, options: { note: string }) => {
    const result = await runOperation('reports.resolve', { id, note: options.note });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
program
  .command('audit')
  .description(
    'print the audit log of moderation actions, oldest first, one line each: time, host, action, subject, reason',
  )
  .option('--json', 'one JSON object a line')
  .action(async (options: { json?: boolean }) => {
    let after = 0;
    for (;;) {
      const page = (await runOperation('audit.list', { after, limit: 1000 })) as Array<
        Record<string, string> & { id: number }
      >;
      for (const entry of page) {
        process.stdout.write(
          options.json
            ? `${JSON.stringify(entry)}\n`
            : `${entry.at}\t${entry.host}\t${entry.action}\t${entry.subject}\t${entry.reason}\n`,
        );
      }
      if (page.length < 1000) break;
      after = page.at(-1)!.id;
    }
  });
// What the reconciliation against the chain leaves to the operator (docs/OPERATIONS.md, "Restoring against the chain").
const payouts = program
  .command('payouts')
  .description('transfers out of the platform address that hold the payout sweep');
payouts
  .command('unresolved')
  .description(
    'list the transfers out of the platform address the database could not attribute, one JSON line each; while any is listed the payout sweep sends nothing',
  )
  .action(async () => {
    const rows = (await runOperation('payouts.unresolved', {})) as unknown[];
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
    if (rows.length === 0) process.stderr.write('no unresolved transfers out: payouts are not held\n');
  });
payouts
  .command('resolve <transaction>')
  .description(
    "say what an unresolved transfer out was: --creator HANDLE records it as that creator's payout (debited, never paid again), --not-a-payout --reason TEXT as anything else",
  )
  .option('--creator <handle>', 'the creator it paid')
  .option('--not-a-payout', 'it was no payout (funds moved by the operator, say); needs --reason')
  .option('--reason <text>', 'why it is no payout, kept with it')
  .action(
    async (
      transaction: string,
      options: { creator?: string; notAPayout?: boolean; reason?: string },
      command: Command,
    ) => {
      if (options.creator && options.notAPayout)
        command.error('error: give --creator or --not-a-payout, not both');
      if (!options.creator && !options.notAPayout)
        command.error('error: give --creator <handle> or --not-a-payout --reason <text>');
      if (options.notAPayout && !options.reason?.trim())
        command.error('error: --not-a-payout needs --reason <text>');
      const resolution = options.creator
        ? { creator: options.creator }
        : { notAPayout: options.reason!.trim() };
      const result = await runOperation('payouts.resolve', { transaction, ...resolution });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
  );

const sales = program.command('sales').description('sales found on chain that no listing could be tied to');
sales
  .command('unattributed')
  .description(
    'list the sales found on chain that the reconciliation could not attribute, one JSON line each',
  )
  .action(async () => {
    const rows = (await runOperation('sales.unattributed', {})) as unknown[];
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
    if (rows.length === 0) process.stderr.write('no unattributed sales\n');
  });
sales
  .command('grant <transaction>')
  .description(
    "grant an unattributed sale as a purchase of OWNER/SLUG (the version on sale at the sale's time, or --version) and credit its creator, through the one settlement statement",
  )
  .requiredOption('--listing <owner/slug>', 'the listing it bought', (value: string) => {
    const match = /^([^/\s]+)\/([^/\s]+)$/.exec(value);
    if (!match) throw new InvalidArgumentError('expected owner/slug');
    return { owner: match[1]!, slug: match[2]! };
  })
  .option('--version <version>', 'the version it bought')
  .action(
    async (transaction: string, options: { listing: { owner: string; slug: string }; version?: string }) => {
      const result = await runOperation('sales.grant', {
        transaction,
        ...options.listing,
        ...(options.version ? { version: options.version } : {}),
      });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
  );
sales
  .command('refund <transaction>')
  .description('record that you refunded an unattributed sale by hand: nothing is granted or credited')
  .requiredOption('--note <text>', 'how it was refunded (the refund transaction, say)')
  .action(async (transaction: string, options: { note: string }) => {
    const result = await runOperation('sales.refund', { transaction, note: options.note });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });

// Release attestations: verifying a download (no server, no database) and the operator's re-signing.
program
  .command('verify <zip> <attestation>')
  .description(
    "check a downloaded zip against its release attestation: the zip is the subject, the signature verifies with a key valid at the statement's attested_at, and the statement is about the listing and version you bought (exit 1 when anything fails); --key pins the service's keys",
  )
  .requiredOption(
    '--expect <owner/slug@version>',
    'what you bought, e.g. acme/tools@1.2.0: an attestation of another listing or version fails',
  )
  .option('--key <keys>', 'the keys document: a saved /.well-known/repo402-keys.json, or its URL')
  .action(
    async (zip: string, attestation: string, options: { expect: string; key?: string }, command: Command) => {
      const { parseExpectedRelease } = await import('./attestations/expect.js');
      const expect = (() => {
        try {
          return parseExpectedRelease(options.expect);
        } catch (error) {
          return command.error(
            `error: option '--expect <owner/slug@version>' argument '${options.expect}' is invalid: ${(error as Error).message}`,
          );
        }
      })();
      const { describeVerification, verifyFiles } = await import('./attestations/verify-files.js');
      const result = await verifyFiles(zip, attestation, { expect, key: options.key });
      if (result.unpinned && result.verification.ok) {
        process.stderr.write(
          `keys taken from ${result.keysFrom}, the service the attestation names; pin them with --key\n`,
        );
      }
      process.stdout.write(`${describeVerification(zip, result)}\n`);
      if (!result.verification.ok) process.exitCode = 1;
    },
  );
const attestations = program.command('attestations').description('release attestations');
attestations
  .command('backfill')
  .description('attest the releases recorded before attestations existed (once, after upgrading)')
  .action(async () => {
    const result = (await runOperation('attestations.backfill', {})) as { attested: number };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
attestations
  .command('resign')
  .description(
    "add the current ATTESTATION_KEY's signature to every attestation it has not signed (after a rotation)",
  )
  .action(async () => {
    const result = (await runOperation('attestations.resign', {})) as { keyid: string; signed: number };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `repo402: ${String(error)}`}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
