import path from 'node:path';
import type { Finding } from './types.js';

const NPM_INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/**
 * Code that runs when the artifact or its dependencies are installed, read from the manifests
 * (never run): npm lifecycle scripts, dependencies flagged `hasInstallScript` in package-lock,
 * setup.py and Cargo build scripts. Each is a disclosed `behaviour` finding.
 */
export function installBehaviour(
  kept: Map<string, string>,
  paths: string[],
): { findings: Finding[]; runs: string[] } {
  const findings: Finding[] = [];
  const runs: string[] = [];
  const disclose = (rule: string, description: string, file: string, extra: Partial<Finding> = {}) =>
    findings.push({
      kind: 'behaviour',
      check: 'dep_behaviour',
      tier: 'disclosed',
      rule_id: rule,
      severity: 'LOW',
      description,
      path: file,
      ...extra,
    });
  for (const [file, text] of kept) {
    if (/(^|\/)node_modules\//.test(file)) continue;
    const base = path.posix.basename(file);
    if (base === 'package.json') {
      const scripts = parse<{ scripts?: Record<string, unknown> }>(text)?.scripts ?? {};
      for (const name of NPM_INSTALL_SCRIPTS) {
        const command = scripts[name];
        if (typeof command !== 'string') continue;
        disclose('npm-install-script', `${file} runs "${name}" at install: ${command.slice(0, 200)}`, file);
        runs.push(`npm ${name}: ${command.slice(0, 200)}`);
      }
    } else if (base === 'package-lock.json' || base === 'npm-shrinkwrap.json') {
      const packages =
        parse<{
          packages?: Record<
            string,
            { hasInstallScript?: boolean; version?: string; dev?: boolean; name?: string }
          >;
        }>(text)?.packages ?? {};
      for (const [key, entry] of Object.entries(packages)) {
        if (!key || !entry?.hasInstallScript) continue;
        const name = entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
        disclose(
          'dependency-install-script',
          `Dependency ${name}@${entry.version ?? '?'} runs an install script`,
          file,
          {
            package: {
              ecosystem: 'npm',
              name,
              version: entry.version ?? null,
              direct: key === `node_modules/${name}`,
              dev: entry.dev === true,
            },
          },
        );
        runs.push(`install script of ${name}`);
      }
    }
  }
  for (const file of paths) {
    const base = path.posix.basename(file);
    if (/(^|\/)(node_modules|vendor)\//.test(file)) continue;
    if (base === 'setup.py') {
      disclose(
        'python-setup-py',
        `${file} runs Python code when the package is built or installed from source`,
        file,
      );
      runs.push(`python ${file} at install`);
    } else if (base === 'build.rs') {
      disclose('cargo-build-script', `${file} runs Rust code at build time`, file);
      runs.push(`cargo build script ${file}`);
    }
  }
  return { findings, runs };
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
