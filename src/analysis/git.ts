import { spawn } from 'node:child_process';

export interface TreeEntry {
  path: string;
  /** Git file mode: 100644, 100755 or 120000 (symlink). */
  mode: string;
  sha: string;
  size: number;
}

/** Runs git with a fixed environment so a user's config cannot change what it prints. */
export function runGit(repoPath: string, args: string[], maxBuffer = 256 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repoPath, '-c', 'core.quotepath=off', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
    });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBuffer) child.kill();
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && size <= maxBuffer) resolve(Buffer.concat(out));
      else reject(new Error(`git ${args[0]} failed (${code}): ${stderr.trim() || 'output too large'}`));
    });
  });
}

/** Every file of the commit's tree (blobs and symlinks; submodules are not files of the artifact). */
export async function listTree(repoPath: string, commit: string): Promise<TreeEntry[]> {
  const out = await runGit(repoPath, ['ls-tree', '-r', '-l', '-z', '--full-tree', commit]);
  const entries: TreeEntry[] = [];
  for (const record of out.toString('utf8').split('\0')) {
    if (!record) continue;
    // "<mode> SP <type> SP <sha> SP+ <size> TAB <path>"
    const tab = record.indexOf('\t');
    const [mode, type, sha, size] = record.slice(0, tab).split(/ +/);
    if (type !== 'blob' || !mode || !sha) continue;
    entries.push({ path: record.slice(tab + 1), mode, sha, size: Number(size) });
  }
  return entries;
}

/**
 * Streams blob contents through one `git cat-file --batch` process: each blob is read once and
 * handed to `onBlob` in the order asked. Memory holds one blob at a time plus pipe buffers.
 */
export async function readBlobs(
  repoPath: string,
  shas: string[],
  onBlob: (index: number, content: Buffer) => void | Promise<void>,
): Promise<void> {
  if (shas.length === 0) return;
  const child = spawn('git', ['-C', repoPath, 'cat-file', '--batch'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.on('error', () => {});
  child.stdin.end(`${shas.join('\n')}\n`);

  let pending: Buffer = Buffer.alloc(0);
  let index = 0;
  let want = -1; // bytes of content (+ trailing LF) still expected for the current blob
  const parts: Buffer[] = [];
  let got = 0;
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length > 0) {
      if (want < 0) {
        const lf = pending.indexOf(10);
        if (lf < 0) break;
        const header = pending.subarray(0, lf).toString('latin1');
        pending = pending.subarray(lf + 1);
        const match = /^[0-9a-f]+ \S+ (\d+)$/.exec(header);
        if (!match) throw new Error(`git cat-file: unexpected header ${JSON.stringify(header)}`);
        want = Number(match[1]) + 1;
        parts.length = 0;
        got = 0;
      }
      const take = Math.min(want - got, pending.length);
      parts.push(pending.subarray(0, take));
      got += take;
      pending = pending.subarray(take);
      if (got === want) {
        const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, got);
        await onBlob(index++, whole.subarray(0, want - 1));
        want = -1;
      }
    }
  }
  const code = await exited;
  if (code !== 0 || index !== shas.length) {
    throw new Error(`git cat-file failed (${code}) after ${index}/${shas.length} blobs: ${stderr.trim()}`);
  }
}
