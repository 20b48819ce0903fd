/**
 * Where a purchase's CPU went in a `bench/payments.ts --cpu-prof` profile, scenario by scenario:
 * only the samples taken while that scenario's runs were measured (the rounds alternate, so every
 * scenario meets the machine's changing speed alike), in milliseconds per purchase, split by side
 * (the server: repo402's or the reference's code, its framework and `pg`; the buyers: the official
 * client, viem and `@noble/*`; neither: runtime work both share) and by package.
 * Usage: npx tsx bench/profile-by-scenario.ts file.cpuprofile [--top 30]
 */
import { readFile } from 'node:fs/promises';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
  windows: { scenario: string; purchases: number; from: number; to: number }[];
}

const [file] = process.argv.slice(2);
const topAt = process.argv.indexOf('--top');
const top = topAt >= 0 ? Number(process.argv[topAt + 1]) : 30;
if (!file) throw new Error('usage: npx tsx bench/profile-by-scenario.ts file.cpuprofile [--top 30]');
const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const SERVER =
  /\/src\/|node_modules\/(fastify|@fastify|pg|pg-protocol|pg-pool|express|router|@x402\/express|pino|zod|find-my-way)\/|bench\/x402-reference/;
const BUYERS = /node_modules\/(undici|@x402\/fetch|@x402\/evm|viem|@noble|ox|abitype)\/|bench\/payments/;

/** The side a sample's stack belongs to: the server's code anywhere in it makes it the server's. */
function sideOf(id: number): 'server' | 'buyers' | 'neither' {
  let side: 'server' | 'buyers' | 'neither' = 'neither';
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const { url } = nodes.get(at)!.callFrame;
    if (SERVER.test(url)) return 'server';
    if (BUYERS.test(url)) side = 'buyers';
  }
  return side;
}

/** The package (or repo402 folder, or Node module) of the sample's own frame. */
function packageOf({ url, functionName }: CallFrame): string {
  if (functionName === '(garbage collector)') return 'GC';
  const dependency = url.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (dependency) return dependency[1]!;
  if (url.includes('/src/')) return `src/${url.split('/src/')[1]!.split('/')[0]}`;
  if (url.startsWith('node:')) return url;
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  return url.split('/').slice(-2).join('/');
}

for (const scenario of [...new Set(profile.windows.map((w) => w.scenario))]) {
  const windows = profile.windows.filter((w) => w.scenario === scenario);
  const purchases = windows.reduce((sum, w) => sum + w.purchases, 0);
  const bySide = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    const frame = nodes.get(id)!.callFrame;
    if (frame.functionName === '(idle)' || !windows.some((w) => at >= w.from && at < w.to)) return;
    busy += delta;
    const side = sideOf(id);
    bySide.set(side, (bySide.get(side) ?? 0) + delta);
    const key = `${side} ${packageOf(frame)}`;
    byPackage.set(key, (byPackage.get(key) ?? 0) + delta);
  });
  const ms = (us: number) => (us / 1000 / purchases).toFixed(3);
  console.log(`\n${scenario}: ${purchases} purchases, busy ${ms(busy)} ms per purchase`);
  console.log([...bySide].map(([side, us]) => `${side} ${ms(us)}`).join(', '));
  for (const [key, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${ms(us).padStart(8)}  ${key}`);
  }
}
