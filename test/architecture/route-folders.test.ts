import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { openApiRoutes } from '../support/openapi-routes.js';
import { ROOT } from '../support/process.js';

/**
 * Where each route lives: docs/CONTRIBUTING.md's table names, for every operation of the OpenAPI
 * document, the folder of src/ whose code declares it. The router is asked, not the table trusted:
 * every route Fastify adds is recorded with the first file of src/ on the stack that added it.
 */
const declaredIn = new Map<string, string>();
const require = createRequire(import.meta.url);
const Router = require(require.resolve('find-my-way', { paths: [require.resolve('fastify')] })) as {
  prototype: { on: (method: string | string[], path: string, ...rest: unknown[]) => unknown };
};
const on = Router.prototype.on;

const SRC = `${path.join(ROOT, 'src')}${path.sep}`;

/** `GET /api/r/:owner/:slug` as the OpenAPI document writes it: `GET /api/r/{owner}/{slug}`. */
const openApiName = (method: string, route: string) =>
  `${method} ${route.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/$/, '') || '/'}`;

function folderOnStack(stack: string): string | undefined {
  for (const line of stack.split('\n')) {
    const at = line.indexOf(SRC);
    if (at < 0) continue;
    const file = line.slice(at + SRC.length).split(':')[0]!;
    // The route's own file, not the composition root (app.ts) that registered its plugin.
    if (file.includes(path.sep)) return file.split(path.sep)[0];
  }
  return undefined;
}

/** The table under "## Where each route lives" in docs/CONTRIBUTING.md: `route -> folder`. */
function documentedTable(): Map<string, string> {
  const text = readFileSync(path.join(ROOT, 'docs/CONTRIBUTING.md'), 'utf8');
  const section = text.slice(text.indexOf('## Where each route lives'));
  const rows = section.slice(0, section.indexOf('\n## ', 3) > 0 ? section.indexOf('\n## ', 3) : undefined);
  const table = new Map<string, string>();
  for (const match of rows.matchAll(/^\| `([A-Z]+ [^`]+)` \| `src\/([a-z0-9-]+)\/` \|/gm)) {
    table.set(match[1]!, match[2]!);
  }
  return table;
}

describe('the route table of docs/CONTRIBUTING.md', () => {
  let t: TestApp;
  beforeAll(async () => {
    Router.prototype.on = function record(this: unknown, method, route, ...rest) {
      const folder = folderOnStack(new Error().stack ?? '');
      for (const one of [method].flat()) if (folder) declaredIn.set(openApiName(one, route), folder);
      return on.call(this, method, route, ...rest);
    };
    try {
      t = await createTestApp();
    } finally {
      Router.prototype.on = on;
    }
  });
  afterAll(() => t?.close());

  it('names, for every operation of the OpenAPI document, the folder whose code declares it', async () => {
    const operations = (await openApiRoutes(t)).map((route) => route.name);
    const actual = new Map(operations.map((name) => [name, declaredIn.get(name) ?? '(not found)']));
    const table = documentedTable();
    const rows = operations.map((name) => `| \`${name}\` | \`src/${actual.get(name)}/\` |`).join('\n');
    expect(Object.fromEntries(table), `docs/CONTRIBUTING.md should list:\n${rows}`).toEqual(
      Object.fromEntries(actual),
    );
  });
});
