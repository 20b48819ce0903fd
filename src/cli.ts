#!/usr/bin/env node
import closeWithGrace from 'close-with-grace';
import { Command, InvalidArgumentError } from 'commander';
import { type Config, ConfigError, loadConfig } from './config.js';
import { type OperationName, operations } from './operations.js';
import { callControl, controlSocketPath } from './platform/control.js';
import { openRuntime } from './runtime.js';

/**
 * Runs an operator command in the running server when there is one (through its control socket),
 * otherwise in this process. Only the command's result goes to stdout.
 */
async function runOperation<N extends OperationName>(
  name: N,
  args: Parameters<(typeof operations)[N]['run']>[1],
): Promise<unknown> {
  const config = loadConfig();
  const remote = await callControl(controlSocketPath(config.dataDir), name, args);
  if (remote) return remote.result;
  const runtime = await openRuntime(config);
  try {
    const operation = operations[name];
    return await operation.run(runtime.ctx, operation.args.parse(args) as never);
  } finally {
    await runtime.close();
  }
}

async function serve(config: Config): Promise<void> {
  // Imported here so operator commands start without loading the whole HTTP application.
  const { startServer } = await import('./server.js');
  const server = await startServer(config);
  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) server.app.log.error({ err }, 'shutting down after an unhandled error');
    else server.app.log.info({ signal }, 'shutting down');
    await server.close();
  });
}

/** Job workers without the HTTP API, for deployments that scale workers separately. */
async function worker(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { jobs: 'workers' });
  runtime.ctx.log.info({ database: runtime.ctx.database.driver }, 'repo402 worker is up');
  closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) runtime.ctx.log.error({ err }, 'shutting down after an unhandled error');
    else runtime.ctx.log.info({ signal }, 'shutting down');
    await runtime.close();
  });
}

function positiveCount(value: string): number {
  const count = Number(value);
  if (!/^[0-9]+$/.test(value) || count < 1 || count > 1000) {
    throw new InvalidArgumentError('expected an integer from 1 to 1000');
  }
  return count;
}

const program = new Command()
  .name('repo402')
  .description('Sell private git repositories as versioned zip artifacts over HTTP 402')
  .showHelpAfterError();

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API and, unless WORKERS=false, the background job workers')
  .action(() => serve(loadConfig()));

program
  .command('worker')
  .description('run the background job workers only (several may run against one PostgreSQL)')
  .action(() => worker(loadConfig()));

program
  .command('migrate')
  .description('apply the committed database migrations')
  .action(async () => {
    await runOperation('migrate', {});
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

program
  .command('pause')
  .description('answer 503 paused on every route except health, in every process sharing the database')
  .action(async () => {
    await runOperation('pause.set', { paused: true });
    process.stderr.write('paused\n');
  });

program
  .command('resume')
  .description('undo pause (a PAUSED=true setting stays in force)')
  .action(async () => {
    const result = (await runOperation('pause.set', { paused: false })) as { paused: boolean };
    process.stderr.write(result.paused ? 'still paused by PAUSED=true in the environment\n' : 'resumed\n');
  });

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `repo402: ${String(error)}`}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
