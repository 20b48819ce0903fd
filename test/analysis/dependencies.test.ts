import { describe, expect, it } from 'vitest';
import { analyseDependencies } from '../../src/analysis/dependencies.js';

const deps = (files: Record<string, string>) => analyseDependencies(new Map(Object.entries(files)));
const brief = (files: Record<string, string>) =>
  deps(files).dependencies.map(
    (d) => `${d.ecosystem}:${d.name}@${d.version ?? '?'}${d.direct ? ' direct' : ''}${d.dev ? ' dev' : ''}`,
  );

describe('dependencies', () => {
  it('reads package-lock v3 with direct and dev flags from package.json', () => {
    const lock = {
      lockfileVersion: 3,
      packages: {
        '': { name: 'app' },
        'node_modules/express': { version: '4.19.2' },
        'node_modules/vitest': { version: '1.6.0', dev: true },
        'node_modules/vitest/node_modules/debug': { version: '4.3.4', dev: true },
        'node_modules/local': { version: '1.0.0', link: true },
      },
    };
    expect(
      brief({
        'package.json': JSON.stringify({
          dependencies: { express: '^4' },
          devDependencies: { vitest: '^1' },
        }),
        'package-lock.json': JSON.stringify(lock),
      }),
    ).toEqual(['npm:debug@4.3.4 dev', 'npm:express@4.19.2 direct', 'npm:vitest@1.6.0 direct dev']);
  });

  it('reads yarn.lock and pnpm-lock.yaml', () => {
    const yarn =
      '# yarn lockfile v1\n\n"@scope/pkg@^1.0.0", "@scope/pkg@^1.1.0":\n  version "1.2.0"\n\nleft-pad@^1.3.0:\n  version "1.3.0"\n';
    expect(
      brief({
        'package.json': JSON.stringify({ dependencies: { 'left-pad': '^1.3.0' } }),
        'yarn.lock': yarn,
      }),
    ).toEqual(['npm:@scope/pkg@1.2.0', 'npm:left-pad@1.3.0 direct']);
    const pnpm =
      "lockfileVersion: '9.0'\npackages:\n  semver@7.6.0:\n    resolution: {integrity: sha512-x}\n  '@types/node@20.1.0':\n    resolution: {integrity: sha512-y}\n";
    expect(
      brief({
        'web/package.json': JSON.stringify({ devDependencies: { '@types/node': '20' } }),
        'web/pnpm-lock.yaml': pnpm,
      }),
    ).toEqual(['npm:@types/node@20.1.0 direct dev', 'npm:semver@7.6.0']);
  });

  it('takes exact pins from package.json when there is no lockfile, and no version for ranges', () => {
    expect(brief({ 'package.json': JSON.stringify({ dependencies: { a: '1.2.3', b: '^2.0.0' } }) })).toEqual([
      'npm:a@1.2.3 direct',
      'npm:b@? direct',
    ]);
  });

  it('reads requirements.txt, pyproject.toml and poetry.lock with PEP 503 names', () => {
    expect(
      brief({
        'requirements.txt': '# deps\nPyYAML==5.3.1\nrequests>=2.0  # http\n-r other.txt\n',
        'requirements-dev.txt': 'pytest==8.0.0\n',
      }),
    ).toEqual(['PyPI:pytest@8.0.0 direct dev', 'PyPI:pyyaml@5.3.1 direct', 'PyPI:requests@? direct']);
    const pyproject =
      '[tool.poetry]\nname = "x"\n[tool.poetry.dependencies]\npython = "^3.11"\nDjango = "^5"\n[tool.poetry.group.dev.dependencies]\npytest = "*"\n';
    const lock =
      '[[package]]\nname = "django"\nversion = "5.0.1"\n\n[[package]]\nname = "pytest"\nversion = "8.0.0"\n\n[[package]]\nname = "asgiref"\nversion = "3.7.2"\n';
    expect(brief({ 'pyproject.toml': pyproject, 'poetry.lock': lock })).toEqual([
      'PyPI:asgiref@3.7.2',
      'PyPI:django@5.0.1 direct',
      'PyPI:pytest@8.0.0 direct dev',
    ]);
  });

  it('reads Cargo.lock (published crates only) and go.mod', () => {
    const cargoToml =
      '[package]\nname = "tool"\n[dependencies]\nserde = "1"\n[dev-dependencies]\ntempfile = "3"\n';
    const cargoLock =
      '[[package]]\nname = "tool"\nversion = "0.1.0"\n\n[[package]]\nname = "serde"\nversion = "1.0.200"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n\n[[package]]\nname = "tempfile"\nversion = "3.10.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n';
    expect(brief({ 'Cargo.toml': cargoToml, 'Cargo.lock': cargoLock })).toEqual([
      'crates.io:serde@1.0.200 direct',
      'crates.io:tempfile@3.10.0 direct dev',
    ]);
    const gomod =
      'module example.com/x\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/net v0.17.0\n\tgithub.com/pkg/errors v0.9.1 // indirect\n)\n\nrequire github.com/a/b v1.0.0\n';
    expect(brief({ 'go.mod': gomod, 'go.sum': 'golang.org/x/net v0.10.0 h1:x\n' })).toEqual([
      'Go:github.com/a/b@v1.0.0 direct',
      'Go:github.com/pkg/errors@v0.9.1',
      'Go:golang.org/x/net@v0.17.0 direct',
    ]);
  });

  it('reports unreadable manifests and ignores vendored ones', () => {
    const result = deps({
      'package.json': '{ broken',
      'node_modules/x/package.json': '{"dependencies":{"y":"1.0.0"}}',
    });
    expect(result).toEqual({ dependencies: [], manifests: [], unreadable: ['package.json'] });
  });
});
