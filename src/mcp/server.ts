import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { AppContext } from '../context.js';
import type { PaymentNetwork } from '../platform/networks.js';
import type { ToolCaller } from './tool.js';
import { MCP_TOOLS } from './tools.js';

const instructions = (network: PaymentNetwork) =>
  `repo402 sells private git repositories as versioned zip artifacts, paid in USDC on ${network.name} (${network.caip2}) over x402 v2. ` +
  'Start with how_to_buy or get_listing; purchase returns the x402 payment-required body when unpaid: sign accepts[0] ' +
  '(EIP-3009) and call purchase again with payment_signature and quote_id. fetch_release re-fetches an owned version for free.';

/**
 * One JSON Schema validator for every server: each server made its own Ajv instance otherwise,
 * about a fifth of an MCP call's CPU (docs/DECISIONS.md, D-87).
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** A fresh server per request (stateless transport); tools see what they need of the HTTP request. */
export function createMcpServer(ctx: AppContext, caller: ToolCaller): McpServer {
  const server = new McpServer(
    { name: 'repo402', version: '0.0.1', websiteUrl: ctx.config.baseUrl },
    { instructions: instructions(ctx.config.payments.network), jsonSchemaValidator },
  );
  for (const tool of MCP_TOOLS) tool.register(server, ctx, caller);
  return server;
}
