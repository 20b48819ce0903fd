// Bundles the web app (src/web) into dist/web: the creator app (one ES module and one stylesheet)
// and the buyer's script (the checkout on manifest pages and the library, styled by the site's
// stylesheet), named by content hash so they can be cached forever, and manifest.json naming them
// for the server.
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
    entryPoints: { app: path.join(root, 'src/web/main.tsx'), buy: path.join(root, 'src/web/buy/main.tsx') },
    outdir,
    entryNames: '[name]-[hash]',
    bundle: true,
    // The devnet's test wallet (a secp256k1 signer, most of the buyer's script) loads only on a devnet.
    splitting: true,
    chunkNames: 'chunk-[hash]',
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
  const output = (prefix, extension) =>
    outputs.find((file) => file.startsWith(prefix) && file.endsWith(extension));
  const manifest = {
    script: output('app-', '.js'),
    stylesheet: output('app-', '.css'),
    buy_script: output('buy-', '.js'),
    files: outputs,
  };
  await writeFile(path.join(outdir, 'manifest.json'), `${JSON.stringify(manifest)}\n`);
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWeb();
