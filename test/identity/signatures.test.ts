import { createPublicClient, http, serializeErc6492Signature } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWalletSignature } from '../../src/identity/signatures.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { type SmartWallet, startTestChain, type TestChain } from '../support/chain.js';
import { freePort } from '../support/process.js';
import { expectError, getChallenge, newWallet, postCreator, registrationBody } from './support.js';

const MESSAGE = 'repo402.test wants you to sign in with your Ethereum account';

describe('verifyWalletSignature', () => {
  let chain: TestChain | undefined;
  afterEach(async () => {
    await chain?.close();
    chain = undefined;
  });

  it('verifies a plain wallet by ECDSA recovery, without a chain', async () => {
    const wallet = newWallet();
    const signature = await wallet.signMessage({ message: MESSAGE });
    expect(
      await verifyWalletSignature(undefined, { address: wallet.address, message: MESSAGE, signature }),
    ).toBe(true);
    expect(
      await verifyWalletSignature(undefined, { address: newWallet().address, message: MESSAGE, signature }),
    ).toBe(false);
    expect(
      await verifyWalletSignature(undefined, { address: wallet.address, message: `${MESSAGE}.`, signature }),
    ).toBe(false);
  });

  it.each(['', '0x', 'nothex', '0xabc', `0x${'00'.repeat(65)}`])(
    'answers false for signature %j',
    async (signature) => {
      const wallet = newWallet();
      expect(
        await verifyWalletSignature(undefined, { address: wallet.address, message: MESSAGE, signature }),
      ).toBe(false);
    },
  );

  it('cannot verify a smart wallet without a chain', async () => {
    const owner = newWallet();
    const smart = newWallet().address;
    const signature = await owner.signMessage({ message: MESSAGE });
    expect(await verifyWalletSignature(undefined, { address: smart, message: MESSAGE, signature })).toBe(
      false,
    );
  });

  it('verifies a deployed EIP-1271 wallet through the chain', async () => {
    const owner = newWallet();
    const wallet: SmartWallet = {
      address: privateKeyToAddress(`0x${'11'.repeat(32)}`),
      owner: owner.address,
    };
    chain = await startTestChain([wallet]);
    const client = createPublicClient({ transport: http(chain.url) });
    const signature = await owner.signMessage({ message: MESSAGE });
    expect(
      await verifyWalletSignature(client, { address: wallet.address, message: MESSAGE, signature }),
    ).toBe(true);
    const stranger = await newWallet().signMessage({ message: MESSAGE });
    expect(
      await verifyWalletSignature(client, { address: wallet.address, message: MESSAGE, signature: stranger }),
    ).toBe(false);
    expect(chain.calls).toContain('eth_call');
  });

  it('verifies an undeployed ERC-6492 wallet through the chain', async () => {
    const owner = newWallet();
    const factory = { address: privateKeyToAddress(`0x${'22'.repeat(32)}`), data: '0xdeadbeef' as const };
    const wallet: SmartWallet = {
      address: privateKeyToAddress(`0x${'33'.repeat(32)}`),
      owner: owner.address,
      factory,
    };
    chain = await startTestChain([wallet]);
    const client = createPublicClient({ transport: http(chain.url) });
    const wrap = async (signer = owner, data: `0x${string}` = factory.data) =>
      serializeErc6492Signature({
        address: factory.address,
        data,
        signature: await signer.signMessage({ message: MESSAGE }),
      });
    expect(
      await verifyWalletSignature(client, {
        address: wallet.address,
        message: MESSAGE,
        signature: await wrap(),
      }),
    ).toBe(true);
    expect(
      await verifyWalletSignature(client, {
        address: wallet.address,
        message: MESSAGE,
        signature: await wrap(newWallet()),
      }),
    ).toBe(false);
    expect(
      await verifyWalletSignature(client, {
        address: wallet.address,
        message: MESSAGE,
        signature: await wrap(owner, '0x01'),
      }),
    ).toBe(false);
  });

  it('never asks the chain about a plain wallet whose signature recovers', async () => {
    chain = await startTestChain([]);
    const client = createPublicClient({ transport: http(chain.url) });
    const wallet = newWallet();
    const signature = await wallet.signMessage({ message: MESSAGE });
    expect(
      await verifyWalletSignature(client, { address: wallet.address, message: MESSAGE, signature }),
    ).toBe(true);
    expect(chain.calls).toEqual([]);
  });

  it('treats an unreachable chain as a server fault, not a bad signature', async () => {
    const client = createPublicClient({
      transport: http(`http://127.0.0.1:${await freePort()}`, { retryCount: 0 }),
    });
    const signature = await newWallet().signMessage({ message: MESSAGE });
    await expect(
      verifyWalletSignature(client, { address: newWallet().address, message: MESSAGE, signature }),
    ).rejects.toMatchObject({ code: 'internal' });
  });
});

describe('smart-wallet payout addresses at registration', () => {
  let t: TestApp;
  let chain: TestChain;
  afterEach(async () => {
    await t?.close();
    await chain?.close();
  });

  it('registers a smart wallet whose owner signs the address_proof', async () => {
    const owner = newWallet();
    const wallet: SmartWallet = {
      address: privateKeyToAddress(`0x${'44'.repeat(32)}`),
      owner: owner.address,
    };
    chain = await startTestChain([wallet]);
    t = await createTestApp({ env: { BASE_RPC_URL: chain.url } });
    const challenge = await getChallenge(t, wallet.address, 'address_proof');
    const address_proof = {
      nonce: challenge.nonce,
      signature: await owner.signMessage({ message: challenge.message }),
    };
    const body = await registrationBody(t, newWallet(), { payout_address: wallet.address, address_proof });
    const res = await postCreator(t, body);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().payout_address).toBe(wallet.address);
  });

  it('answers 500 internal when the chain cannot be reached, and the plain-wallet path still works', async () => {
    t = await createTestApp({ env: { BASE_RPC_URL: `http://127.0.0.1:${await freePort()}` } });
    const payout = newWallet();
    const challenge = await getChallenge(t, payout.address, 'address_proof');
    const forged = {
      nonce: challenge.nonce,
      signature: await newWallet().signMessage({ message: challenge.message }),
    };
    expectError(
      await postCreator(t, await registrationBody(t, payout, { address_proof: forged })),
      500,
      'internal',
    );
    expect((await postCreator(t, await registrationBody(t))).statusCode).toBe(201);
  });
});
