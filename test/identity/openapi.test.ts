import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

type Operation = {
  tags: string[];
  security?: unknown[];
  responses: Record<string, { description: string }>;
  parameters?: { name: string; in: string }[];
};

describe('identity routes in the OpenAPI document', () => {
  let t: TestApp;
  let paths: Record<string, Record<string, Operation>>;
  let schemas: Record<string, unknown>;
  beforeAll(async () => {
    t = await createTestApp();
    const doc = (await t.app.inject({ url: '/api/openapi.json' })).json();
    paths = doc.paths;
    schemas = doc.components.schemas;
  });
  afterAll(async () => t.close());

  const codes = (operation: Operation) =>
    Object.fromEntries(
      Object.entries(operation.responses).map(([status, response]) => [status, response.description]),
    );

  it.each([
    ['get', '/api/auth/challenge', 'auth', ['200', '400', '429']],
    ['post', '/api/auth/rotate-key', 'auth', ['200', '400', '401', '404', '429']],
    ['post', '/api/auth/sessions', 'auth', ['201', '400', '401', '404', '429']],
    ['delete', '/api/auth/sessions/current', 'auth', ['204', '400', '401', '429']],
    ['post', '/api/creators', 'creator', ['201', '400', '403', '409', '429', '451']],
    ['get', '/api/creators/me', 'creator', ['200', '401', '429']],
    ['patch', '/api/creators/me', 'creator', ['200', '400', '401', '403', '429', '451']],
  ])('%s %s is tagged %s and lists its responses', (method, path, tag, statuses) => {
    const operation = paths[path]?.[method];
    expect(operation, `${method} ${path}`).toBeDefined();
    expect(operation!.tags).toEqual([tag]);
    expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining([...statuses, '500', '503']));
  });

  it('names the spec’s error codes per status', () => {
    expect(codes(paths['/api/creators']!.post!)).toMatchObject({
      400: '`invalid_request`, `payout_address_unverified`',
      403: '`invite_required`, `sanctioned_counterparty`',
      409: '`terms_version_stale`',
      451: '`blocked_jurisdiction`',
    });
    expect(codes(paths['/api/creators/me']!.patch!)).toMatchObject({
      400: '`invalid_request`, `payout_address_unverified`',
      401: '`invalid_key`, `invalid_signature`',
      403: '`step_up_required`, `insufficient_scope`, `sanctioned_counterparty`',
    });
    expect(codes(paths['/api/auth/rotate-key']!.post!)).toMatchObject({ 401: '`invalid_signature`' });
  });

  it('marks key routes with the bearer scheme and the scope they need, and registration and rotation without one', () => {
    expect(paths['/api/creators/me']!.get!.security).toEqual([{ apiKey: [] }]);
    expect(paths['/api/creators/me']!.patch!.security).toEqual([{ apiKey: ['account:write'] }]);
    expect(paths['/api/auth/sessions/current']!.delete!.security).toEqual([{ apiKey: [] }]);
    expect(paths['/api/creators']!.post!.security).toBeUndefined();
    expect(paths['/api/auth/rotate-key']!.post!.security).toBeUndefined();
  });

  it('documents the Idempotency-Key header and the request and response schemas', () => {
    expect(paths['/api/creators']!.post!.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'idempotency-key', in: 'header' })]),
    );
    for (const name of [
      'Challenge',
      'Creator',
      // Request schemas with transforms (addresses are checksummed) get the provider's `Input` suffix.
      'CreateCreatorRequestInput',
      'CreateCreatorResponse',
      'UpdateCreatorRequestInput',
      'UpdateCreatorResponse',
      'RotateKeyRequestInput',
      'RotateKeyResponse',
      'SessionRequestInput',
      'SessionResponse',
    ]) {
      expect(schemas[name], name).toBeDefined();
    }
  });

  it('says in the rotation response what the rotation revoked', () => {
    const rotation = schemas.RotateKeyResponse as {
      required: string[];
      properties: { revoked: { required: string[]; properties: Record<string, { type: string }> } };
    };
    expect(rotation.required).toContain('revoked');
    expect(rotation.properties.revoked.required).toEqual(['agent_keys', 'web_sessions']);
    expect(rotation.properties.revoked.properties.web_sessions!.type).toBe('integer');
  });
});
