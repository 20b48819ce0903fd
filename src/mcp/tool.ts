import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { AppError, errorBody, isAppError } from '../platform/errors.js';
import type { PaymentNetwork } from '../platform/networks.js';

/** What a tool knows of the HTTP request that carried its call: plain values, as services take them. */
export interface ToolCaller {
  /** The caller's country (`requestCountry`), for the jurisdiction check. */
  country?: string;
  log: FastifyBaseLogger;
}

export interface McpTool {
  name: string;
  register(server: McpServer, ctx: AppContext, caller: ToolCaller): void;
}

interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  title: string;
  /** A function when it names the network paid on, which is the deployment's. */
  description: string | ((network: PaymentNetwork) => string);
  input: I;
  output: O;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

/**
 * A tool whose result is validated structured content (plus the same JSON as text for clients
 * that read only text), and whose failures are `isError` results carrying the spec's error body,
 * exactly what the HTTP route would have answered.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  name: string,
  spec: ToolSpec<I, O>,
  run: (ctx: AppContext, args: z.infer<I>, caller: ToolCaller) => Promise<z.infer<O>>,
): McpTool {
  // Built once: every request registers the tools on a fresh server. A registered schema
  // (`.meta({id})`) would become a root `$ref`; MCP wants `type: object` at the root.
  const outputSchema = z.looseObject(spec.output.shape);
  return {
    name,
    register(server, ctx, caller) {
      server.registerTool(
        name,
        {
          title: spec.title,
          description:
            typeof spec.description === 'string'
              ? spec.description
              : spec.description(ctx.config.payments.network),
          inputSchema: spec.input,
          outputSchema,
          annotations: spec.annotations,
        },
        // The SDK's generic over Zod shapes cannot follow `I` here; the schema above validates args.
        (async (args: z.infer<I>): Promise<CallToolResult> => {
          try {
            const result = (await run(ctx, args, caller)) as Record<string, unknown>;
            return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
          } catch (error) {
            const appError = isAppError(error) ? error : new AppError('internal');
            if (!isAppError(error)) caller.log.error({ err: error, tool: name }, 'MCP tool failed');
            const body = errorBody(ctx.config.baseUrl, appError);
            return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
          }
        }) as never,
      );
    },
  };
}
