/**
 * What the code and docs say the software does outside itself: hosts it contacts, environment
 * variables it reads, external programs it runs. Read from text with patterns; nothing is executed.
 */
export interface FileCapabilities {
  hosts: string[];
  env: string[];
  tools: string[];
}

const URL_HOST =
  /\b(?:https?|wss?):\/\/(\[[0-9a-fA-F:]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.)*[A-Za-z0-9-]{1,63})(?::\d{1,5})?/g;
const ENV_PATTERNS = [
  /process\.env\.([A-Za-z_][A-Za-z0-9_]*)/g,
  /process\.env\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]/g,
  /os\.environ(?:\.get)?[[(]\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]/g,
  /os\.getenv\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]/g,
  /os\.(?:Getenv|LookupEnv)\(\s*"([A-Za-z_][A-Za-z0-9_]*)"/g,
  /env::var(?:_os)?\(\s*"([A-Za-z_][A-Za-z0-9_]*)"/g,
  /Deno\.env\.get\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]/g,
  /ENV\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]/g,
];
const ENV_HINT = /env|ENV/;
const TOOL_HINT = /exec|spawn|subprocess|os\.system|popen|Command/;
const SHELL_ENV = /\$\{?([A-Z][A-Z0-9_]{2,})\b/g;
const SHELL_BUILTIN_VARS = new Set([
  'HOME',
  'PATH',
  'PWD',
  'USER',
  'SHELL',
  'IFS',
  'OLDPWD',
  'RANDOM',
  'LINENO',
  'BASH_SOURCE',
  'SECONDS',
]);
const TOOL_PATTERNS = [
  /\b(?:exec|execSync|spawn|spawnSync|execFile|execFileSync|execa|execaSync)\(\s*['"`]([A-Za-z0-9_./-]+)/g,
  /\bsubprocess\.(?:run|call|check_call|check_output|Popen)\(\s*\[?\s*['"]([A-Za-z0-9_./-]+)/g,
  /\bos\.(?:system|popen)\(\s*['"]([A-Za-z0-9_./-]+)/g,
  /\bexec\.Command(?:Context)?\(\s*(?:ctx,\s*)?"([A-Za-z0-9_./-]+)"/g,
  /\bCommand::new\(\s*"([A-Za-z0-9_./-]+)"/g,
  /\bBun\.spawn\(\s*\[\s*['"]([A-Za-z0-9_./-]+)/g,
];
/** In shell scripts, lines starting with one of these count as running that tool. */
const SHELL_TOOLS = new Set([
  'curl',
  'wget',
  'git',
  'gh',
  'docker',
  'podman',
  'npm',
  'npx',
  'pnpm',
  'yarn',
  'bun',
  'deno',
  'node',
  'pip',
  'pip3',
  'pipx',
  'uv',
  'python',
  'python3',
  'ssh',
  'scp',
  'rsync',
  'jq',
  'aws',
  'gcloud',
  'az',
  'kubectl',
  'helm',
  'terraform',
  'make',
  'cargo',
  'go',
  'brew',
  'apt',
  'apt-get',
  'sudo',
  'chmod',
  'rm',
  'nc',
  'openssl',
  'sqlite3',
  'psql',
]);

export const isLocalHost = (host: string) =>
  /^(localhost|.*\.localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]|::1)$/i.test(host);
const IGNORED_HOST = /(^|\.)(example\.(com|org|net)|[a-z0-9-]+\.(example|test|invalid))$/i;

export function fileCapabilities(text: string, kind: 'code' | 'shell' | 'docs'): FileCapabilities {
  const hosts = new Set<string>();
  for (const m of text.matchAll(URL_HOST)) {
    const host = m[1]!.toLowerCase();
    if (IGNORED_HOST.test(host)) continue;
    if (!host.includes('.') && !isLocalHost(host)) continue;
    hosts.add(host);
  }
  const env = new Set<string>();
  const tools = new Set<string>();
  // Cheap literal checks first: most files read no environment and start no program.
  if (kind !== 'docs' && ENV_HINT.test(text)) {
    for (const pattern of ENV_PATTERNS) for (const m of text.matchAll(pattern)) env.add(m[1]!);
  }
  if (kind !== 'docs' && TOOL_HINT.test(text)) {
    for (const pattern of TOOL_PATTERNS)
      for (const m of text.matchAll(pattern)) tools.add(baseCommand(m[1]!));
  }
  if (kind === 'shell') {
    for (const m of text.matchAll(SHELL_ENV)) if (!SHELL_BUILTIN_VARS.has(m[1]!)) env.add(m[1]!);
    for (const raw of text.split('\n')) {
      const line = raw.trim().replace(/^(?:sudo\s+|exec\s+|\|\|\s*|&&\s*)/, '');
      const word = /^([a-z][a-z0-9_.-]*)\b/.exec(line)?.[1];
      if (word && SHELL_TOOLS.has(word)) tools.add(word);
    }
  }
  return { hosts: [...hosts], env: [...env], tools: [...tools] };
}

function baseCommand(command: string): string {
  return command.split('/').pop() || command;
}
