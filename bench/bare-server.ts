/**
 * The ceiling for each route: a bare Fastify app with default options, in a process of its own,
 * answering each captured request with repo402's own status, headers and body bytes, prepared
 * once. Reads the captured responses (bench/same-bytes.ts) from the JSON file named on the command
 * line, prints its URL on one line, then runs until killed.
 */
import { readFile } from 'node:fs/promises';
import Fastify from 'fastify';
import type { CapturedResponse } from './same-bytes.js';

const responses = JSON.parse(await readFile(process.argv[2]!, 'utf8')) as CapturedResponse[];
const app = Fastify({ logger: false });
for (const response of responses) {
  const body = Buffer.from(response.body, 'base64');
  app.route({
    method: response.method as 'GET' | 'POST',
    url: response.path,
    handler: async (_request, reply) => reply.code(response.status).headers(response.headers).send(body),
  });
}
process.stdout.write(`${await app.listen({ port: 0, host: '127.0.0.1' })}\n`);
