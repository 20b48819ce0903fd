import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { encodeWalletSignature, verifyWalletSignatureHeader } from '../../src/identity/wallet-signature.js';
import { errorResponses } from '../../src/platform/http/schemas.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { expectError, newWallet, signedChallenge, walletSignatureHeader } from './support.js';

describe.each(BACKENDS)('X-Wallet-Signature on %s', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  /** A buyer route as payments will write it: the header identifies the wallet. */
  async function appWithWalletRoute() {
    t = await createTestApp({
      backend,
      extend: (app, ctx) => {
        app.get(
          '/test/whoami',
          {
            schema: {
              response: { 200: z.object({ address: z.string() }), ...errorResponses('invalid_signature') },
            },
          },
          async (request) => ({
            address: await verifyWalletSignatureHeader(ctx, request.headers['x-wallet-signature']),
          }),
        );
      },
    });
  }

  const whoami = (header?: string) =>
    t.app.inject({
      url: '/test/whoami',
      headers: header === undefined ? {} : { 'x-wallet-signature': header },
    });

  it('identifies the wallet once per challenge', async () => {
    await appWithWalletRoute();
    const wallet = newWallet();
    const header = await walletSignatureHeader(t, wallet);
    const res = await whoami(header);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ address: wallet.address });
    expectError(await whoami(header), 401, 'invalid_signature');
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not base64', '%%%'],
    ['base64url', Buffer.from('{"address":"0x"}').toString('base64url').replace(/=+$/, '').concat('_-')],
    ['not JSON', Buffer.from('hello').toString('base64')],
    [
      'JSON without a signature',
      Buffer.from(JSON.stringify({ address: '0x', nonce: 'a' })).toString('base64'),
    ],
    [
      'JSON with extra fields',
      Buffer.from(JSON.stringify({ address: '0x', nonce: 'a', signature: '0x', x: 1 })).toString('base64'),
    ],
  ])('refuses a %s header with 401 invalid_signature', async (_name, header) => {
    await appWithWalletRoute();
    expectError(await whoami(header), 401, 'invalid_signature');
  });

  it('refuses a header naming another address than the challenge’s', async () => {
    await appWithWalletRoute();
    const wallet = newWallet();
    const { nonce, signature } = await signedChallenge(t, wallet, 'wallet_ownership');
    expectError(
      await whoami(encodeWalletSignature({ address: newWallet().address, nonce, signature })),
      401,
      'invalid_signature',
    );
  });

  it('refuses a signature by another wallet', async () => {
    await appWithWalletRoute();
    const wallet = newWallet();
    const { nonce, signature } = await signedChallenge(t, wallet, 'wallet_ownership', {
      signer: newWallet(),
    });
    expectError(
      await whoami(encodeWalletSignature({ address: wallet.address, nonce, signature })),
      401,
      'invalid_signature',
    );
  });

  it('refuses challenges of other purposes', async () => {
    await appWithWalletRoute();
    const wallet = newWallet();
    for (const purpose of ['address_proof', 'step_up', 'rotate_key'] as const) {
      const { nonce, signature } = await signedChallenge(t, wallet, purpose);
      expectError(
        await whoami(encodeWalletSignature({ address: wallet.address, nonce, signature })),
        401,
        'invalid_signature',
      );
    }
  });
});
