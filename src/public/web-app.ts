import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { SITE_LINKS } from '../platform/http/discovery-links.js';
import { FAVICON_SVG_PATH } from '../platform/http/favicon.js';
import { STYLESHEET_PATH } from '../platform/http/page.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';

/**
 * The creator web app at /app: one HTML shell for every path under it (the app routes in the
 * browser) and the bundle `npm run build` wrote to dist/web. The app is an API client like any
 * other; these routes serve only its files.
 *
 * The shell forbids every script but the bundle, every connection but this origin, and being
 * framed: the page holds a key that manages the creator's listings.
 */

export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Two levels up from src/public (tsx) and dist/public (built) alike. */
const WEB_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));
const ASSETS = '/app/assets/';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** dist/web/manifest.json, written by scripts/build-web.mjs. */
interface WebManifest {
  script: string;
  stylesheet: string;
  /** The buyer's script: the checkout on manifest pages and the library. */
  buy_script: string;
  files: string[];
}

interface Bundle {
  shell: string;
  /** The path of the buyer's script, for the pages that load it. */
  buyScript: string;
  /** Every file the build wrote, by name: nothing else under /app/assets is served. */
  files: Map<string, Buffer>;
}

const bundles = new Map<string, Promise<Bundle>>();

/** The built bundle in `dir`, read once; a failed read (not built yet) is retried on the next call. */
function webBundle(dir: string): Promise<Bundle> {
  let bundle = bundles.get(dir);
  if (!bundle) {
    bundle = loadBundle(dir);
    bundle.catch(() => bundles.delete(dir));
    bundles.set(dir, bundle);
  }
  return bundle;
}

/**
 * The buyer's script for a page to load, or nothing when the web app is not built: the pages that
 * load it say everything without it.
 */
export async function buyScriptPath(dir = WEB_DIR): Promise<string | undefined> {
  return webBundle(dir).then(
    (bundle) => bundle.buyScript,
    () => undefined,
  );
}

async function loadBundle(dir: string): Promise<Bundle> {
  let manifest: WebManifest;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
  } catch {
    throw new AppError('not_found', {
      message: 'The web app is not built on this server: run `npm run build`, then restart',
    });
  }
  const files = new Map<string, Buffer>();
  for (const name of manifest.files) files.set(name, await readFile(path.join(dir, name)));
  return { shell: shellHtml(manifest), buyScript: `${ASSETS}${manifest.buy_script}`, files };
}

function shellHtml(manifest: WebManifest): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>repo402 · creators</title>
<link rel="icon" href="${FAVICON_SVG_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="stylesheet" href="${ASSETS}${manifest.stylesheet}">
<script type="module" src="${ASSETS}${manifest.script}"></script>
</head>
<body>
<div id="app"><noscript><main class="wrap"><h1>repo402 for creators</h1><p>This app needs JavaScript. Everything it does is also a JSON route: see <a href="/docs/selling">the selling guide</a>.</p></main></noscript></div>
</body>
</html>
`;
}

export function registerWebApp(app: App, ctx: AppContext, dir = WEB_DIR): void {
  const loaded = () => webBundle(dir);
  const options = { schema: { hide: true }, config: rateLimitConfig(ctx.config, 'public') };

  const shell = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .header('content-security-policy', APP_CSP)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('link', SITE_LINKS)
      .type('text/html; charset=utf-8')
      .send((await loaded()).shell);
  app.get('/app', options, shell);
  app.get('/app/*', options, shell);

  app.get<{ Params: { file: string } }>(`${ASSETS}:file`, options, async (request, reply) => {
    const file = (await loaded()).files.get(request.params.file);
    if (!file) throw new AppError('not_found', { message: 'No such file in the web app' });
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .type(TYPES[path.extname(request.params.file)] ?? 'application/octet-stream')
      .send(file);
  });
}
