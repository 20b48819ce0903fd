/**
 * Renders docs/CONFIGURATION.md from the configuration schema in src/config.ts: each variable's
 * description (and, where the schema has no default, what unset means) lives once, in the schema's
 * `.meta()`; this script only orders the variables into sections and lays them out.
 *
 *   npx tsx scripts/config-reference.ts           writes docs/CONFIGURATION.md
 *   npx tsx scripts/config-reference.ts --check   exits 1 if the committed file is stale
 *
 * test/config-reference.test.ts renders the document the same way and fails while it differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { EnvSchema, SECRET_VARIABLES } from '../src/config.js';

export const REFERENCE_PATH = fileURLToPath(new URL('../docs/CONFIGURATION.md', import.meta.url));
export const GENERATE_COMMAND = 'npx tsx scripts/config-reference.ts';

export interface Section {
  title: string;
  /** Markdown shown under the heading: what the section's variables share, never one variable's description. */
  intro?: string;
  variables: string[];
}

/** Every variable of the schema, in exactly one section; a new variable must be placed here. */
export const SECTIONS: Section[] = [
  {
    title: 'Server and HTTP',
    intro:
      'Where the HTTP API listens, the URL it gives out, and how long clients may take ([OPERATIONS.md](OPERATIONS.md), "Connection limits").',
    variables: [
      'PORT',
      'HOST',
      'BASE_URL',
      'TRUST_PROXY',
      'HTTP_HEADERS_TIMEOUT_SECONDS',
      'HTTP_REQUEST_TIMEOUT_SECONDS',
      'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS',
      'LOG_LEVEL',
      'PAUSED',
      'SHUTDOWN_TIMEOUT_MS',
    ],
  },
  {
    title: 'Metrics and readiness',
    intro:
      'What an operator watches: each process\'s Prometheus metrics and readiness ([OPERATIONS.md](OPERATIONS.md), "Metrics and readiness").',
    variables: ['METRICS_TOKEN', 'METRICS_PORT', 'METRICS_HOST'],
  },
  {
    title: 'Data, database and processes',
    intro:
      'One machine needs none of these. Past one machine, every process shares one PostgreSQL, one Redis, one S3 bucket and one `APP_SECRET` ([OPERATIONS.md](OPERATIONS.md), "Scaling out").',
    variables: [
      'DATA_DIR',
      'DATABASE_URL',
      'REDIS_URL',
      'APP_SECRET',
      'ATTESTATION_KEY',
      'WORKERS',
      'GIT_HOST_URL',
    ],
  },
  {
    title: 'Hosted git over SSH',
    intro:
      'The SSH server creators push hosted repositories to ([RELEASES.md](RELEASES.md)); how its caps share the connections: [OPERATIONS.md](OPERATIONS.md), "Connection limits".',
    variables: [
      'SSH_PORT',
      'SSH_HOST',
      'SSH_LISTEN_HOST',
      'SSH_HANDSHAKE_TIMEOUT_SECONDS',
      'SSH_IDLE_TIMEOUT_SECONDS',
      'SSH_MAX_CONNECTIONS',
      'SSH_MAX_CONNECTIONS_PER_ADDRESS',
      'SSH_MAX_CONNECTIONS_PER_BLOCK',
      'SSH_MAX_UNAUTHENTICATED_CONNECTIONS',
    ],
  },
  {
    title: 'Rate limits',
    intro: [
      'Counted in memory, or shared between processes through `REDIS_URL`.',
      'Registration is also limited to 5 per hour per IP, as the specification requires (not configurable).',
      'Only attempts that reach the signature check count, valid or not: a malformed body, or one refused',
      'before its `address_proof` is checked (stale terms, no invite code), and a replay under the same',
      '`Idempotency-Key` do not.',
    ].join(' '),
    variables: [
      'RATE_LIMIT_PUBLIC',
      'RATE_LIMIT_AUTH',
      'RATE_LIMIT_CREATOR',
      'RATE_LIMIT_MCP',
      'MCP_STREAM_SECONDS',
      'MCP_STREAMS_PER_IP',
    ],
  },
  {
    title: 'Compliance and mail',
    intro:
      'Sanctioned addresses and blocked jurisdictions, checked on every route that moves money or binds an address ([DECISIONS.md](DECISIONS.md), "Compliance"), and how account announcements are sent.',
    variables: ['SANCTIONS_FILE', 'COUNTRY_HEADER', 'BLOCKED_COUNTRIES', 'SMTP_URL', 'MAIL_FROM'],
  },
  {
    title: 'Webhooks',
    intro:
      'Signed webhooks to holders and creators: their retries, and the development switch that lets them reach this machine ([WEBHOOKS.md](WEBHOOKS.md)).',
    variables: ['WEBHOOK_RETRY_DELAYS_SECONDS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES'],
  },
  {
    title: 'Payments',
    intro:
      'x402 buying, on the embedded devnet chain by default and on Base in mainnet mode ([PAYMENTS.md](PAYMENTS.md)).',
    variables: [
      'PAYMENTS_MODE',
      'FACILITATOR_URL',
      'CDP_API_KEY_ID',
      'CDP_API_KEY_SECRET',
      'BASE_RPC_URL',
      'PLATFORM_PAYOUT_ADDRESS',
      'PAYOUT_PRIVATE_KEY',
      'USDC_CONTRACT',
      'PLATFORM_FEE_BPS',
      'SETTLEMENT_TIMEOUT_MS',
      'EXPLORER_TX_URL',
    ],
  },
  {
    title: 'Release limits',
    intro: 'A push or sync past a limit is refused before anything is cut ([RELEASES.md](RELEASES.md)).',
    variables: [
      'RELEASE_TAGS_PER_PUSH',
      'RELEASES_PER_LISTING_PER_DAY',
      'CREATOR_STORAGE_BYTES',
      'TREE_MAX_DEPTH',
      'CUT_WORKER_TIMEOUT_SECONDS',
    ],
  },
  {
    title: 'Advisory data',
    intro:
      'The OSV records the dependency checks read ([SCANNING.md](SCANNING.md); [OPERATIONS.md](OPERATIONS.md), "Advisory data").',
    variables: ['OSV_URL', 'OSV_SYNC'],
  },
  {
    title: 'Blob storage (S3)',
    intro: 'Where release zips and SBOMs are kept; a bucket is required with `GIT_HOST_URL`.',
    variables: [
      'S3_BUCKET',
      'S3_REGION',
      'S3_ENDPOINT',
      'S3_PUBLIC_ENDPOINT',
      'S3_ACCESS_KEY_ID',
      'S3_SECRET_ACCESS_KEY',
      'S3_FORCE_PATH_STYLE',
      'S3_PREFIX',
    ],
  },
  {
    title: 'GitHub-backed listings',
    intro: [
      "Optional. Listings with `source: github` (Rail A) read a creator's private GitHub repository through",
      'a GitHub App you register (permissions Contents: read and Metadata: read; events Create and Push;',
      'webhook URL `{BASE_URL}/api/github/webhooks`). `GITHUB_APP_ID`, a key (`GITHUB_APP_PRIVATE_KEY` or',
      '`GITHUB_APP_PRIVATE_KEY_PATH`) and `GITHUB_WEBHOOK_SECRET` are set together or not at all, on every',
      '`serve` and `worker` process. Registering the App, GitHub Enterprise Server, and what happens when a',
      'creator uninstalls it: [GITHUB.md](GITHUB.md).',
    ].join(' '),
    variables: [
      'GITHUB_APP_ID',
      'GITHUB_APP_PRIVATE_KEY',
      'GITHUB_APP_PRIVATE_KEY_PATH',
      'GITHUB_WEBHOOK_SECRET',
      'GITHUB_API_URL',
      'GITHUB_GIT_ALLOW_HTTP',
    ],
  },
];

export interface VariableReference {
  name: string;
  section: string;
  description: string;
  /** The schema's default as written in the environment; absent when the schema has none. */
  default?: string;
  /** What applies while the variable is unset, when the schema has no default. */
  unset?: string;
  /** Its value never appears in an error message (SECRET_VARIABLES in src/config.ts). */
  secret: boolean;
}

const META_KEYS = new Set(['description', 'unset', 'default']);

/** The default a field's schema applies, looking through the transforms around it. */
function schemaDefault(schema: z.core.$ZodType): { value: unknown } | undefined {
  if (schema instanceof z.ZodDefault) return { value: schema.def.defaultValue };
  if (schema instanceof z.ZodPipe) return schemaDefault(schema.def.in);
  return undefined;
}

/** Every variable of the schema with what the reference says about it; throws on a gap in the schema's metadata. */
export function configurationVariables(): VariableReference[] {
  const fields = EnvSchema.shape as Record<string, z.ZodType>;
  const problems: string[] = [];
  const sectionOf = new Map<string, string>();
  for (const section of SECTIONS) {
    for (const name of section.variables) {
      if (!(name in fields)) problems.push(`${name}: in section "${section.title}" but not in the schema`);
      else if (sectionOf.has(name)) problems.push(`${name}: in two sections`);
      sectionOf.set(name, section.title);
    }
  }
  for (const name of SECRET_VARIABLES) {
    if (!(name in fields)) problems.push(`${name}: in SECRET_VARIABLES but not in the schema`);
  }
  const variables: VariableReference[] = [];
  for (const [name, schema] of Object.entries(fields)) {
    const meta = (schema.meta() ?? {}) as Record<string, unknown>;
    const section = sectionOf.get(name);
    if (!section) problems.push(`${name}: in no section (add it to SECTIONS in scripts/config-reference.ts)`);
    for (const key of Object.keys(meta)) {
      if (!META_KEYS.has(key)) problems.push(`${name}: unknown meta key "${key}"`);
    }
    const { description, unset, default: shownDefault } = meta;
    if (typeof description !== 'string' || description.trim() === '') {
      problems.push(`${name}: no description (give it .meta({ description }) in src/config.ts)`);
      continue;
    }
    if (unset !== undefined && typeof unset !== 'string')
      problems.push(`${name}: meta "unset" is not a string`);
    const found = schemaDefault(schema);
    let written: string | undefined;
    if (found) {
      if (unset !== undefined) problems.push(`${name}: has a schema default, so no "unset" text`);
      if (typeof shownDefault === 'string') written = shownDefault;
      else if (shownDefault !== undefined) problems.push(`${name}: meta "default" is not a string`);
      else if (['string', 'number', 'boolean'].includes(typeof found.value)) written = String(found.value);
      else
        problems.push(`${name}: its default is not a plain value: give it as written in .meta({ default })`);
      // What the reference shows must be what the service applies.
      if (written !== undefined) {
        const parsed = schema.safeParse(written);
        if (!parsed.success || !isDeepStrictEqual(parsed.data, schema.parse(undefined))) {
          problems.push(`${name}: its documented default "${written}" is not the schema's default`);
        }
      }
    } else if (shownDefault !== undefined) {
      problems.push(`${name}: meta "default" given but the schema has no default`);
    }
    variables.push({
      name,
      section: section ?? '',
      description: description.trim(),
      ...(written !== undefined && { default: written }),
      ...(typeof unset === 'string' && { unset }),
      secret: SECRET_VARIABLES.has(name),
    });
  }
  if (problems.length > 0) {
    throw new Error(
      `The configuration schema cannot be documented:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  }
  return variables;
}

/** GitHub's heading anchor. */
export function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replaceAll(' ', '-');
}

/** One table cell: on one line, its pipes escaped. */
function cell(markdown: string): string {
  return markdown.replace(/\s+/g, ' ').replaceAll('|', '\\|');
}

function defaultCell(variable: VariableReference): string {
  if (variable.default !== undefined) return `\`${variable.default}\``;
  return variable.unset === undefined ? '(unset)' : `(unset: ${variable.unset})`;
}

export function renderConfigurationReference(): string {
  const variables = configurationVariables();
  const lines = [
    '# Configuration',
    '',
    `<!-- Generated from src/config.ts by scripts/config-reference.ts: change a description there, then run \`${GENERATE_COMMAND}\`. -->`,
    '',
    'All configuration comes from the environment, read once at start-up. A bad value stops start-up',
    'with a message naming the variable (exit status 2); an empty variable counts as unset. Switches',
    'take `true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`). A variable marked *secret* (a key,',
    'or a URL that may carry a password) never has its value shown in an error message.',
    '',
    `Each secret variable also has a \`_FILE\` form naming a file that holds the value, as container`,
    'platforms mount secrets (`APP_SECRET_FILE=/run/secrets/app-secret`; one trailing newline is',
    `dropped; setting both forms is refused): ${[...SECRET_VARIABLES].map((name) => `\`${name}_FILE\``).join(', ')}.`,
    '',
    `${variables.length} variables, in sections:`,
    '',
    ...SECTIONS.map((section) => `- [${section.title}](#${anchor(section.title)})`),
  ];
  for (const section of SECTIONS) {
    lines.push('', `## ${section.title}`, '');
    if (section.intro) lines.push(section.intro, '');
    lines.push('| Variable | Default | Description |', '| --- | --- | --- |');
    for (const name of section.variables) {
      const variable = variables.find((v) => v.name === name)!;
      const label = `\`${name}\`${variable.secret ? ' (secret)' : ''}`;
      lines.push(`| ${label} | ${cell(defaultCell(variable))} | ${cell(variable.description)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rendered = renderConfigurationReference();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(REFERENCE_PATH, 'utf8');
    } catch {}
    if (committed !== rendered) {
      process.stderr.write(`docs/CONFIGURATION.md is stale: run \`${GENERATE_COMMAND}\`\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(REFERENCE_PATH, rendered);
    process.stderr.write(`wrote docs/CONFIGURATION.md (${renderedCount(rendered)} variables)\n`);
  }
}

function renderedCount(markdown: string): number {
  return markdown.split('\n').filter((line) => line.startsWith('| `')).length;
}
