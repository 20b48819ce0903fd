import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  anchor,
  configurationVariables,
  GENERATE_COMMAND,
  REFERENCE_PATH,
  renderConfigurationReference,
  SECTIONS,
} from '../scripts/config-reference.js';
import { EnvSchema, loadConfig } from '../src/config.js';

describe('docs/CONFIGURATION.md', () => {
  it('is what the configuration schema renders', () => {
    const committed = existsSync(REFERENCE_PATH) ? readFileSync(REFERENCE_PATH, 'utf8') : '(missing)';
    expect(
      committed,
      `docs/CONFIGURATION.md does not match the schema in src/config.ts: run \`${GENERATE_COMMAND}\` and commit the result`,
    ).toBe(renderConfigurationReference());
  });

  it('documents every variable the schema accepts, once, with a description', () => {
    const variables = configurationVariables();
    expect(variables.map((v) => v.name).sort()).toEqual(Object.keys(EnvSchema.shape).sort());
    expect(SECTIONS.flatMap((s) => s.variables).sort()).toEqual(Object.keys(EnvSchema.shape).sort());
    const document = renderConfigurationReference();
    for (const { name, description } of variables) {
      expect(description.length, name).toBeGreaterThan(0);
      expect(document.match(new RegExp(`^\\| \`${name}\``, 'gm')), name).toHaveLength(1);
    }
  });

  it('shows as each default what the service applies when the variable is unset', () => {
    const unset = loadConfig({});
    const withDefaults = configurationVariables().filter((v) => v.default !== undefined);
    expect(withDefaults.length).toBeGreaterThan(30);
    for (const variable of withDefaults) {
      expect(loadConfig({ [variable.name]: variable.default! }), variable.name).toEqual(unset);
    }
  });

  it('marks the variables whose values error messages hide as secret', () => {
    const secret = configurationVariables()
      .filter((v) => v.secret)
      .map((v) => v.name);
    expect(secret).toEqual(
      expect.arrayContaining(['APP_SECRET', 'PAYOUT_PRIVATE_KEY', 'GITHUB_WEBHOOK_SECRET']),
    );
    for (const name of secret) {
      expect(renderConfigurationReference()).toContain(`| \`${name}\` (secret) |`);
    }
  });

  it('links only to files and sections that exist', () => {
    const document = renderConfigurationReference();
    const headings = new Set([...document.matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1]!)));
    const links = [...document.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(10);
    for (const link of links) {
      if (/^[a-z]+:/.test(link)) continue;
      const [file, fragment] = link.split('#');
      if (file) expect(existsSync(path.join(path.dirname(REFERENCE_PATH), file)), link).toBe(true);
      else expect(headings.has(fragment!), link).toBe(true);
    }
  });
});
