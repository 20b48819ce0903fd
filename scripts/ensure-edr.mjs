// Hardhat's EDR (the devnet chain) ships its native code as per-platform packages that declare
// node >= 22; on Node 20 npm silently skips the optional one and EDR then cannot load. This
// installs the matching binding only when EDR does not load, so other platforms are untouched.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const EDR_VERSION = '0.20.0';

function edrLoads() {
  try {
    execFileSync(process.execPath, ['-e', "require('@nomicfoundation/edr')"], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function bindingName() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const musl = !process.report?.getReport?.().header?.glibcVersionRuntime;
    return `@nomicfoundation/edr-linux-${arch}-${musl ? 'musl' : 'gnu'}`;
  }
  if (platform === 'win32') return `@nomicfoundation/edr-win32-${arch}-msvc`;
  return `@nomicfoundation/edr-${platform}-${arch}`;
}

try {
  require.resolve('@nomicfoundation/edr');
} catch {
  process.exit(0); // not installed (for example a production install without it): nothing to do
}
if (!edrLoads()) {
  const binding = `${bindingName()}@${EDR_VERSION}`;
  process.stderr.write(
    `repo402: installing ${binding} so the devnet chain loads on Node ${process.version}\n`,
  );
  try {
    execFileSync('npm', ['install', '--no-save', '--force', '--no-audit', '--no-fund', binding], {
      stdio: ['ignore', 'ignore', 'inherit'],
      shell: process.platform === 'win32',
    });
  } catch {
    // Reported below.
  }
  if (!edrLoads()) {
    process.stderr.write(
      `repo402: the devnet chain (Hardhat EDR) cannot load on this platform; install ${binding} by hand, ` +
        'or run with FACILITATOR_URL set (mainnet mode)\n',
    );
  }
}
