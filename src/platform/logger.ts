import type { FastifyRequest } from 'fastify';
import pino from 'pino';

const WALLET_ADDRESS = /0x[0-9a-fA-F]{36}([0-9a-fA-F]{4})(?![0-9a-fA-F])/g;

/**
 * A URL as the log keeps it: wallet addresses (in a path or query) cut to their last four hex
 * digits, enough to tell two apart in an incident and too little to follow a buyer across logs.
 */
export function loggedUrl(url: string): string {
  return url.replace(WALLET_ADDRESS, '0x…$1');
}

/**
 * The process's one logger (Fastify uses it too): credentials in headers never reach the log, and
 * request lines carry no wallet address in clear.
 */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino(
    {
      level,
      redact: [
        'req.headers.authorization',
        'req.headers["payment-signature"]',
        'req.headers["x-wallet-signature"]',
      ],
      serializers: {
        // Fastify's own request fields, with the URL masked.
        req: (request: FastifyRequest) => ({
          method: request.method,
          url: loggedUrl(request.url),
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        }),
      },
    },
    destination,
  );
}
