import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { repoPath } from '../../src/git/repos.js';
import {
  ControlError,
  type ControlServer,
  callOperation,
  type Operations,
  startControlServer,
} from '../../src/platform/control.js';
import { AppError } from '../../src/platform/errors.js';

/**
 * The operations endpoint the git host serves over TCP (and the CLI's socket over a Unix path):
 * a bearer token is required, arguments are checked by the operation's schema, and a refusal the
 * operation meant crosses as the same AppError, code and details included.
 */
describe('operations over TCP', () => {
  const token = 'a-token-derived-from-the-secret';
  const operations: Operations<AppContext> = {
    echo: { args: z.object({ text: z.string() }), run: async (_ctx, args: { text: string }) => args.text },
    refuse: {
      args: z.object({}),
      run: async () => {
        throw new AppError('repo_too_large', { message: 'Too many files', details: { limit: 'files' } });
      },
    },
    crash: {
      args: z.object({}),
      run: async () => {
        throw new Error('disk on fire');
      },
    },
  };
  let server: ControlServer;
  const target = () => ({ url: server.address, token, timeoutMs: 5000 });

  beforeAll(async () => {
    server = await startControlServer({ host: '127.0.0.1', port: 0, token }, {} as AppContext, operations);
  });
  afterAll(() => server.close());

  it('runs an operation for a holder of the token', async () => {
    expect(await callOperation(target(), 'echo', { text: 'hi' })).toBe('hi');
  });

  it('answers 401 without the token, with another one, or with it in another scheme', async () => {
    for (const authorization of [undefined, 'Bearer nope', `Basic ${token}`, token, `Bearer ${token}x`]) {
      const res = await fetch(`${server.address}/ops/echo`, {
        method: 'POST',
        headers: authorization ? { authorization } : {},
        body: JSON.stringify({ text: 'hi' }),
      });
      expect(res.status).toBe(401);
    }
  });

  it('carries a refusal across as the same AppError, and anything else as a ControlError', async () => {
    const refused = await callOperation(target(), 'refuse', {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'repo_too_large', status: 413, message: 'Too many files' });
    expect((refused as AppError).details).toEqual({ limit: 'files' });
    await expect(callOperation(target(), 'crash', {})).rejects.toThrow(ControlError);
    await expect(callOperation(target(), 'nope', {})).rejects.toThrow(/unknown operation nope/);
    await expect(callOperation(target(), 'echo', { text: 3 })).rejects.toThrow(ControlError);
  });

  it('refuses arguments over a megabyte', async () => {
    const res = await fetch(`${server.address}/ops/echo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024) }),
    }).catch((error: unknown) => error);
    // The server answers 413 and closes; a client still sending may see the reset instead.
    if (res instanceof Response) expect(res.status).toBe(413);
    else expect(res).toBeInstanceOf(Error);
  });
});

describe('repository paths', () => {
  it('never name a path outside the repositories, whatever the names given', () => {
    const config = loadConfig({ DATA_DIR: '/srv/repo402' });
    expect(repoPath(config, 'alice', 'tool-kit')).toBe('/srv/repo402/repos/alice/tool-kit.git');
    for (const [owner, slug] of [
      ['..', 'x'],
      ['alice', '../../etc'],
      ['alice/..', 'x'],
      ['Alice', 'x'],
      ['', 'x'],
      ['alice', '-x'],
    ]) {
      expect(() => repoPath(config, owner!, slug!)).toThrow(/not a repository name/);
    }
  });
});
