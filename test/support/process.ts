import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedEmbeddedDatabase } from './embedded-database.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  scripts: { start: string };
};

/** package.json's version: what `repo402 --version` and /api/health must name. */
export const PACKAGE_VERSION = PACKAGE.version;

/**
 * The node arguments that run `repo402` from the current source: the JavaScript global setup
 * transpiled (test/support/global-setup.ts), or src/cli.ts through tsx where there is none (benches).
 */
export function cliEntry(): string[] {
  const transpiled = process.env.REPO402_TRANSPILED_CLI;
  return transpiled ? [transpiled] : ['--import', 'tsx', path.join(ROOT, 'src/cli.ts')];
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The Node flags `npm start` runs the server with (package.json's `start` script), so benches measure that. */
function startFlags(): string[] {
  return PACKAGE.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/** Runs the repo402 CLI from source, as `repo402 <args>` would run the build. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry(), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`repo402 ${args.join(' ')} timed out\n${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** `count` distinct free ports: each is held until all are found, so none is handed out twice. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.listen(0, '127.0.0.1', () => resolve(server));
          server.on('error', reject);
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  logs(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * `repo402 serve` in a child process, resolved once /api/health answers: from source through tsx,
 * or with `built` the compiled dist/cli.js as `npm start` runs it (what bench/ measures). On the
 * embedded database, a DATA_DIR with no database yet gets an initialised one copied in
 * (test/support/embedded-database.ts) unless `newDatabase` asks for a first start's.
 */
export async function startServerProcess(
  env: Record<string, string>,
  { built = false, newDatabase = false }: { built?: boolean; newDatabase?: boolean } = {},
): Promise<ServerProcess> {
  if (env.DATA_DIR && !env.DATABASE_URL && !newDatabase) {
    await seedEmbeddedDatabase(path.join(env.DATA_DIR, 'db'));
  }
  const [port = 0, sshPort = 0] = await freePorts(2);
  const url = `http://127.0.0.1:${port}`;
  const entry = built ? [...startFlags(), path.join(ROOT, 'dist/cli.js')] : cliEntry();
  const child = spawn(process.execPath, [...entry, 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: url,
      SSH_PORT: String(sshPort),
      // Tests never reach the internet: no hourly advisory sync, even in mainnet mode.
      OSV_SYNC: 'false',
      ...env,
    },
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    url,
    port,
    logs: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
