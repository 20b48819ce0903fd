/**
 * Takes docs/images/manifest-page.png, the README's screenshot: the top of the manifest page
 * (`GET /{owner}/{slug}`) of a realistic listing at 1280×900, in Debian's Chromium through
 * playwright-core, launched as the page tests launch it (test/support/browser.ts).
 *
 *   npx tsx scripts/manifest-screenshot.ts [out.png]
 *
 * The real app runs in this process on a fresh in-memory PGlite (test/support/app.ts); its one
 * listing's releases are zipped, analysed and scanned for real (test/support/listings.ts). The
 * server listens on a free port, and the browser asks for http://localhost:8402, where `npm start`
 * serves: every request to that origin is answered by this app, so the page shows the address a
 * reader's own server has.
 */

import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { registerCreator } from '../test/identity/support.js';
import { createTestApp } from '../test/support/app.js';
import { launchBrowser } from '../test/support/browser.js';
import { publishedListingFixture } from '../test/support/listings.js';

const OUT = process.argv[2] ?? fileURLToPath(new URL('../docs/images/manifest-page.png', import.meta.url));
const SHOWN_ORIGIN = 'http://localhost:8402';

const MIT = (
  createRequire(import.meta.url)('spdx-license-list/full') as Record<string, { licenseText: string }>
).MIT!.licenseText.replace('<year> <copyright holders>', '2026 Ada Lovelace');

const README = `# release-notes

Turns the commits since your last tag into release notes a person wants to read: grouped by
kind (features, fixes, breaking changes), with the pull requests and authors credited.

- **Skill** \`release-notes\`: ask your agent for "release notes since v1.3.0".
- **Command** \`/release-notes\`: the same from a slash command.
- **CLI** \`release-notes <from> [to]\`: prints Markdown, for CI.

## Usage

\`\`\`sh
npx release-notes v1.3.0 HEAD > NOTES.md
\`\`\`

Conventional Commits are grouped by type; other messages are grouped by the paths they touch.
Nothing leaves your machine: it reads \`git log\` and writes Markdown.
`;

const SKILL = `---
name: release-notes
description: Writes release notes from the commits between two tags, grouped by kind.
---

Run \`release-notes <from> <to>\` in the repository and edit the Markdown it prints: keep
the breaking changes first, and say in one line what each group means for a user.
`;

const COMMAND = `---
description: Release notes since the last tag
---

Run \`release-notes $(git describe --tags --abbrev=0) HEAD\` and show the result.
`;

const CLI = `#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { render } from '../src/notes.js';

const [from, to = 'HEAD'] = process.argv.slice(2);
if (!from) {
  console.error('usage: release-notes <from> [to]');
  process.exit(2);
}
const log = execFileSync('git', ['log', '--format=%H%x1f%an%x1f%s', \`\${from}..\${to}\`], { encoding: 'utf8' });
process.stdout.write(render(log, { from, to }));
`;

const NOTES = `const KINDS = { feat: 'Features', fix: 'Fixes', perf: 'Performance', docs: 'Documentation' };

/** Parses \`git log --format=%H%x1f%an%x1f%s\` output into commits. */
export function parse(log) {
  return log
    .split('\\n')
    .filter(Boolean)
    .map((line) => {
      const [sha, author, subject] = line.split('\\x1f');
      const match = /^(\\w+)(\\(.+\\))?(!)?: (.*)$/.exec(subject);
      return {
        sha,
        author,
        kind: match ? match[1] : 'other',
        breaking: Boolean(match?.[3]),
        text: match ? match[4] : subject,
      };
    });
}

/** Release notes in Markdown, breaking changes first. */
export function render(log, { from, to }) {
  const commits = parse(log);
  const lines = [\`## Changes from \${from} to \${to}\`, ''];
  const breaking = commits.filter((c) => c.breaking);
  if (breaking.length > 0) {
    lines.push('### Breaking changes', '', ...breaking.map((c) => \`- \${c.text} (\${c.author})\`), '');
  }
  for (const [kind, title] of Object.entries(KINDS)) {
    const group = commits.filter((c) => c.kind === kind && !c.breaking);
    if (group.length > 0) lines.push(\`### \${title}\`, '', ...group.map((c) => \`- \${c.text} (\${c.author})\`), '');
  }
  return \`\${lines.join('\\n')}\\n\`;
}
`;

const TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse, render } from '../src/notes.js';

const log = ['a1\\x1fAda\\x1ffeat: group by kind', 'b2\\x1fGrace\\x1ffix!: keep the tag order'].join('\\n');

test('parses conventional commits', () => {
  assert.deepEqual(
    parse(log).map((c) => c.kind),
    ['feat', 'fix'],
  );
});

test('puts breaking changes first', () => {
  assert.match(render(log, { from: 'v1.0.0', to: 'v1.1.0' }), /### Breaking changes\\n\\n- keep the tag order/);
});
`;

const PACKAGE = `${JSON.stringify(
  {
    name: 'release-notes',
    version: '1.4.0',
    type: 'module',
    bin: { 'release-notes': 'bin/release-notes.js' },
    scripts: { test: 'node --test' },
    license: 'MIT',
  },
  null,
  2,
)}\n`;

const LOCK = `${JSON.stringify(
  {
    name: 'release-notes',
    version: '1.4.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'release-notes', version: '1.4.0', license: 'MIT' } },
  },
  null,
  2,
)}\n`;

const FILES = {
  'README.md': README,
  LICENSE: MIT,
  'package.json': PACKAGE,
  'package-lock.json': LOCK,
  'skills/release-notes/SKILL.md': SKILL,
  'commands/release-notes.md': COMMAND,
  'bin/release-notes.js': CLI,
  'src/notes.js': NOTES,
  'test/notes.test.js': TEST,
};

async function main(): Promise<void> {
  const t = await createTestApp({ env: { BASE_URL: SHOWN_ORIGIN } });
  const browser = await launchBrowser();
  try {
    const creator = await registerCreator(t, { handle: 'ada' });
    const listing = await publishedListingFixture(t, {
      creator,
      slug: 'release-notes',
      priceMicro: 4_000_000n,
      updatePriceMicro: 1_000_000n,
      description: 'Release notes from your commits: a skill, a slash command and a CLI',
      triggerHint: 'you tag a release and need notes a person wants to read',
      releases: [
        { version: '1.3.0', files: { ...FILES, 'src/notes.js': NOTES.replace(", perf: 'Performance'", '') } },
        { version: '1.4.0', files: FILES },
      ],
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.route(`${SHOWN_ORIGIN}/**`, async (route) => {
      const url = new URL(route.request().url());
      url.host = `127.0.0.1:${port}`;
      await route.fulfill({ response: await route.fetch({ url: url.toString() }) });
    });
    const page = await context.newPage();
    const response = await page.goto(`${SHOWN_ORIGIN}/${listing.owner}/${listing.slug}`);
    if (response?.status() !== 200) throw new Error(`the manifest page answered ${response?.status()}`);
    await page.screenshot({ path: OUT, type: 'png' });
    process.stderr.write(`wrote ${OUT} (${Math.round(statSync(OUT).size / 1024)} KiB)\n`);
  } finally {
    await browser.close();
    await t.close();
  }
}

await main();
