import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** One request exactly as the load generator sends it. */
export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface BenchRoute {
  /** The name `--routes` takes. */
  id: string;
  /** The route as the table shows it. */
  label: string;
  /** Whether issue 18's targets (0.6 of the bare route, p99 under 50 ms) apply to it. */
  target: boolean;
  /** The status a correct answer has; anything else counts as an error. */
  status: number;
  request: BenchRequest;
}

interface Listing {
  owner: string;
  slug: string;
}

const get = (path: string): BenchRequest => ({ method: 'GET', path, headers: {} });

/** The public routes, in the order the table lists them. */
const CATALOGUE: Array<
  Omit<BenchRoute, 'request'> & { request(l: Listing, base: string): Promise<BenchRequest> }
> = [
  {
    id: 'label',
    label: 'GET /api/label/{owner}/{slug}',
    target: true,
    status: 200,
    request: async (l) => get(`/api/label/${l.owner}/${l.slug}`),
  },
  {
    id: '402',
    label: 'GET /api/r/{owner}/{slug} (the 402)',
    target: true,
    status: 402,
    request: async (l) => get(`/api/r/${l.owner}/${l.slug}`),
  },
  {
    id: 'version',
    label: 'GET /api/v/{owner}/{slug} (no signature)',
    target: true,
    status: 200,
    request: async (l) => get(`/api/v/${l.owner}/${l.slug}`),
  },
  {
    id: 'page',
    label: 'GET /{owner}/{slug} (manifest page)',
    target: true,
    status: 200,
    request: async (l) => ({ ...get(`/${l.owner}/${l.slug}`), headers: { accept: 'text/html' } }),
  },
  {
    id: 'snippet',
    label: 'GET /api/snippet/{owner}/{slug}',
    target: true,
    status: 200,
    request: async (l) => get(`/api/snippet/${l.owner}/${l.slug}`),
  },
  {
    id: 'releases',
    label: 'GET /api/v/{owner}/{slug}/releases',
    target: true,
    status: 200,
    request: async (l) => get(`/api/v/${l.owner}/${l.slug}/releases`),
  },
  {
    id: 'well-known',
    label: 'GET /.well-known/x402',
    target: true,
    status: 200,
    request: async () => get('/.well-known/x402'),
  },
  {
    id: 'health',
    label: 'GET /api/health (database round trip)',
    target: false,
    status: 200,
    request: async () => get('/api/health'),
  },
  {
    id: 'mcp',
    label: 'POST /api/mcp tools/call get_listing',
    target: false,
    status: 200,
    request: (l, base) => mcpToolCall(base, 'get_listing', { owner: l.owner, slug: l.slug }),
  },
];

export const ROUTE_IDS = CATALOGUE.map((route) => route.id);

/** The chosen routes (all when `ids` is undefined) for `listing` on the server at `base`. */
export async function benchRoutes(base: string, listing: Listing, ids?: string[]): Promise<BenchRoute[]> {
  const chosen = CATALOGUE.filter((route) => !ids || ids.includes(route.id));
  return Promise.all(
    chosen.map(async (route) => ({ ...route, request: await route.request(listing, base) })),
  );
}

/**
 * The `tools/call` request the official MCP client sends once it is connected: the client
 * initialises (the server is stateless, so there is no session id to carry), then calls the tool,
 * and its request is recorded as it goes out, headers (Accept, MCP-Protocol-Version) and body.
 */
async function mcpToolCall(base: string, name: string, args: Record<string, unknown>): Promise<BenchRequest> {
  let recorded: BenchRequest | undefined;
  const transport = new StreamableHTTPClientTransport(new URL('/api/mcp', base), {
    fetch: async (url, init) => {
      const body = typeof init?.body === 'string' ? init.body : undefined;
      if (init?.method === 'POST' && body && JSON.parse(body).method === 'tools/call') {
        const headers: Record<string, string> = {};
        new Headers(init.headers).forEach((value, header) => {
          headers[header] = value;
        });
        recorded = { method: 'POST', path: new URL(url).pathname, headers, body };
      }
      return fetch(url, init);
    },
  });
  const client = new Client({ name: 'repo402-bench', version: '1.0.0' });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`MCP ${name} failed: ${JSON.stringify(result.content)}`);
  } finally {
    await client.close();
  }
  if (!recorded) throw new Error('the MCP client sent no tools/call request');
  return recorded;
}
