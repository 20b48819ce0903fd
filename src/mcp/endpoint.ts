import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { App, AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { BODY_LIMITS } from '../platform/http/json-body.js';
import { errorResponses } from '../platform/http/schemas.js';
import { requestCountry } from '../platform/limits/compliance.js';
import { peerKey } from '../platform/limits/peer-key.js';
import { rateLimitConfig } from '../platform/limits/rate-limit.js';

/**
 * `/api/mcp`: the buy-side MCP server over stateless Streamable HTTP. Every POST gets a fresh
 * server and transport (the SDK refuses to reuse either). Header problems are answered here with
 * repo402's error body before the SDK sees the request, so MCP callers meet the same errors as
 * every other route.
 */

const JsonRpcMessageSchema = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    method: z.string().optional(),
    id: z.union([z.string(), z.number().int()]).optional(),
  })
  .meta({ id: 'JsonRpcMessage', description: 'One JSON-RPC 2.0 request, notification or response' });

const KEEP_ALIVE_MS = 15_000;

/**
 * The MCP SDK and our tools, loaded by the first MCP request rather than at start: 3 MB of heap
 * (after collection) that an idle server, or one no agent talks MCP to, does not hold
 * (docs/DECISIONS.md, D-87). A failed import is retried by the next request.
 */
async function importMcp() {
  const [transport, types, server] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('./server.js'),
  ]);
  return {
    StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport,
    JSONRPCMessageSchema: types.JSONRPCMessageSchema,
    /** Each request a client may send, by method: the SDK's own schema for its params. */
    clientRequests: new Map(
      types.ClientRequestSchema.options.map((option) => [option.shape.method.value as string, option]),
    ),
    SUPPORTED_PROTOCOL_VERSIONS: types.SUPPORTED_PROTOCOL_VERSIONS,
    createMcpServer: server.createMcpServer,
  };
}
type Mcp = Awaited<ReturnType<typeof importMcp>>;
let mcpModules: Promise<Mcp> | undefined;
function loadMcp(): Promise<Mcp> {
  mcpModules ??= importMcp().catch((error: unknown) => {
    mcpModules = undefined;
    throw error;
  });
  return mcpModules;
}

export function registerMcpRoutes(app: App, ctx: AppContext): void {
  const streams = new NotificationStreams(ctx.config.mcp.streamsPerIp, ctx.config.mcp.streamSeconds);
  app.addHook('preClose', async () => streams.endAll());

  app.post(
    '/api/mcp',
    {
      schema: {
        tags: ['public'],
        summary: 'MCP (JSON-RPC 2.0 over Streamable HTTP, stateless)',
        description:
          'Tools: how_to_buy, get_listing, check_version, purchase, fetch_release. `Accept` must list application/json and text/event-stream.',
        body: JsonRpcMessageSchema,
        response: {
          200: z.unknown().meta({ description: 'The JSON-RPC response (application/json)' }),
          202: z.unknown().meta({ description: 'A notification or response was accepted' }),
          ...errorResponses('invalid_request', 'rate_limited'),
        },
      },
      config: rateLimitConfig(ctx.config, 'mcp'),
      bodyLimit: BODY_LIMITS.large,
    },
    async (request, reply) => {
      const mcp = await loadMcp();
      requireAccept(request.headers.accept, ['application/json', 'text/event-stream']);
      requireKnownProtocolVersion(mcp, request.headers['mcp-protocol-version']);
      requireJsonRpcMessage(mcp, request.body);
      const server = mcp.createMcpServer(ctx, {
        country: requestCountry(ctx.config.compliance, request.headers),
        log: request.log,
      });
      const transport = new mcp.StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      hijack(reply);
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  app.get(
    '/api/mcp',
    {
      schema: {
        tags: ['public'],
        summary: 'MCP notification stream',
        description:
          'A quiet server-sent-event stream: the server is stateless and pushes nothing, so it carries keep-alive comments only and closes after a bounded lifetime.',
        response: {
          200: z.string().meta({ description: 'text/event-stream' }),
          ...errorResponses('invalid_request', 'rate_limited'),
        },
      },
      config: rateLimitConfig(ctx.config, 'mcp'),
    },
    async (request, reply) => {
      requireAccept(request.headers.accept, ['text/event-stream']);
      requireKnownProtocolVersion(await loadMcp(), request.headers['mcp-protocol-version']);
      streams.open(peerKey(request.ip), () => hijack(reply));
    },
  );

  app.delete(
    '/api/mcp',
    {
      schema: {
        tags: ['public'],
        summary: 'End an MCP session',
        description:
          'Always 200 for a well-formed request: a stateless server keeps no session to end. A body that does not parse as its content type is still a 400.',
        response: {
          200: z.null().meta({ description: 'Empty' }),
          ...errorResponses('invalid_request', 'rate_limited'),
        },
      },
      config: rateLimitConfig(ctx.config, 'mcp'),
    },
    async (_request, reply) => reply.code(200).send(null),
  );
}

/** Hands the raw response to the SDK or the stream, keeping headers already set by hooks (request id, CORS, rate limit). */
function hijack(reply: FastifyReply): ServerResponse {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value);
  }
  reply.hijack();
  return reply.raw;
}

/** The MCP transport requires each type listed by name; `*\/*` alone would reach the SDK's own 406 body. */
function requireAccept(accept: string | undefined, needed: string[]): void {
  const listed = (accept ?? '').split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  const missing = needed.filter((type) => !listed.includes(type));
  if (missing.length > 0) {
    throw AppError.invalid([{ field: 'accept', reason: `must list ${needed.join(' and ')}` }]);
  }
}

/**
 * The body schema above documents the envelope; the SDK then holds each message to its own strict
 * schema (a method or a result, params an object, no extra fields) and answers a miss with a
 * JSON-RPC parse error, and a known method's bad params with an internal error quoting its schema
 * check. Checking with the SDK's schemas first keeps both refusals in our error body. An unknown
 * method is left to the SDK, whose "method not found" is the protocol's own answer.
 */
function requireJsonRpcMessage(mcp: Mcp, body: unknown): void {
  if (!mcp.JSONRPCMessageSchema.safeParse(body).success) {
    throw AppError.invalid([
      {
        field: 'body',
        reason: 'not a JSON-RPC 2.0 request, notification, result or error as MCP defines them',
      },
    ]);
  }
  const { method, params } = body as { method?: unknown; params?: unknown };
  const schema = typeof method === 'string' ? mcp.clientRequests.get(method) : undefined;
  const checked = schema?.safeParse({ method, params });
  if (checked && !checked.success) {
    const issue = checked.error.issues[0];
    throw AppError.invalid([
      {
        field: ['params', ...(issue?.path.slice(1) ?? [])].join('.'),
        reason: `not valid params for ${method}: ${issue?.message ?? 'invalid'}`,
      },
    ]);
  }
}

function requireKnownProtocolVersion(mcp: Mcp, version: string | string[] | undefined): void {
  if (version === undefined) return;
  if (typeof version !== 'string' || !mcp.SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw AppError.invalid([
      {
        field: 'mcp-protocol-version',
        reason: `unsupported; supported: ${mcp.SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
      },
    ]);
  }
}

/**
 * Open notification streams, capped per client (`peerKey`: an IPv4 address, an IPv6 /64) and in
 * lifetime, released when the client leaves.
 */
class NotificationStreams {
  private readonly perClient = new Map<string, number>();
  private readonly open_ = new Set<ServerResponse>();

  constructor(
    private readonly cap: number,
    private readonly lifetimeSeconds: number,
  ) {}

  /** Refuses over the cap before `take` hands the response over, so the refusal is an ordinary error body. */
  open(client: string, take: () => ServerResponse): void {
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.cap) {
      throw new AppError('rate_limited', {
        message: `At most ${this.cap} open MCP notification streams per address`,
        retryAfterSeconds: this.lifetimeSeconds,
      });
    }
    const response = take();
    this.perClient.set(client, held + 1);
    this.open_.add(response);
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      // The stream always ends (lifetime, shutdown); never leave its socket behind as keep-alive.
      connection: 'close',
    });
    response.write(': repo402 MCP notification stream (stateless: keep-alive comments only)\n\n');
    const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    const lifetime = setTimeout(() => response.end(), this.lifetimeSeconds * 1000);
    response.on('close', () => {
      clearInterval(keepAlive);
      clearTimeout(lifetime);
      this.open_.delete(response);
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
    });
  }

  endAll(): void {
    for (const response of this.open_) response.end();
  }
}
