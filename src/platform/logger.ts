import pino from 'pino';

/** The process's one logger (Fastify uses it too); credentials in headers never reach the log. */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino(
    {
      level,
      redact: [
        'req.headers.authorization',
        'req.headers["payment-signature"]',
        'req.headers["x-wallet-signature"]',
      ],
    },
    destination,
  );
}
