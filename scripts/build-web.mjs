// Bundles the creator web app (src/web) into dist/web: one ES module and one stylesheet, named by
// content hash so they can be cached forever, and manifest.json naming them for the server.
// Run by `npm run build`; the test suite's global setup runs it too, so tests serve current code.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function buildWeb(outdir = path.join(root, 'dist/web')) {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  const result = await build({
    entryPoints: [path.join(root, 'src/web/main.tsx')],
    outdir,
    entryNames: 'app-[hash]',
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const manifest = {
    script: outputs.find((file) => file.endsWith('.js')),
    stylesheet: outputs.find((file) => file.endsWith('.css')),
    files: outputs,
  };
  await writeFile(path.join(outdir, 'manifest.json'), `${JSON.stringify(manifest)}\n`);
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWeb();
