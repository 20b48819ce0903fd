import { describe, expect, it } from 'vitest';
import { baseChainClient } from '../../src/platform/chain-client.js';
import { freePort } from '../support/process.js';

/** An RPC provider's key lives in its URL: errors reading the chain must not carry it to the log. */
describe('the chain client', () => {
  it('names the endpoint without its path, query or credentials when a request fails', async () => {
    const url = `http://user:pw@127.0.0.1:${await freePort()}/v2/SECRET-API-KEY?key=SECRET2`;
    const error = await baseChainClient(url)
      .getBlockNumber()
      .then(
        () => expect.fail('the endpoint does not answer'),
        (caught: Error) => caught,
      );
    const seen = JSON.stringify({ ...error, message: error.message, stack: error.stack });
    expect(seen).not.toMatch(/SECRET|pw@/);
    expect(error.message).toContain('http://127.0.0.1');
  });
});
