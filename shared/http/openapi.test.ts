import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import { type AnyAction, type AnyPathEndpoint, defineAction, defineEndpoint, noInput } from './action.ts';
import type { WireDialect } from './dialect.ts';
import {
  type DescribedEndpoint,
  describeAction,
  describeRoute,
  openApiDocument,
  openApiPath,
} from './openapi.ts';

const OPTIONS = {
  title: 'test',
  version: '0.0.0',
  description: 'test',
  bearer: 'a token',
  commonErrors: (): ErrorCode[] => [],
};

const document = (endpoints: DescribedEndpoint[], options = OPTIONS) => openApiDocument(endpoints, options);
const handler = () => ({});
/** The document of gateway-like actions (users by default) and routes. */
const documentOf = (actions: AnyAction[], routes: AnyPathEndpoint[] = []) =>
  document([
    ...actions.map((a) => describeAction(a, ['user'])),
    ...routes.map((r) => describeRoute(r, 'routes')),
  ]);

describe('openApiDocument', () => {
  it('turns `:param` segments into path parameters typed by the params schema', () => {
    expect(openApiPath('/v1/ai/responses/:id/items/:item_id')).toBe('/v1/ai/responses/{id}/items/{item_id}');
    const doc = document([
      describeRoute(
        defineEndpoint({
          method: 'GET',
          path: '/things/:id',
          params: z.object({ id: z.string().min(3) }).transform(({ id }) => id.toUpperCase()),
          input: z.strictObject({ limit: z.coerce.number().int().default(5), q: z.string() }),
          handler,
        }),
        'things',
      ),
    ]);
    const op = doc.paths['/things/{id}']!.get!;
    expect(op.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 3 } },
      expect.objectContaining({ name: 'limit', in: 'query', required: false }),
      expect.objectContaining({ name: 'q', in: 'query', required: true, schema: { type: 'string' } }),
    ]);
    expect(op['x-error-codes']).toEqual(['validation_failed', 'not_found', 'internal_error']);
  });

  it('derives security and error codes from who may call an action', () => {
    const action = (identities: ('guest' | 'user' | 'admin')[]) =>
      describeAction(
        defineAction({
          service: 's',
          action: identities.join('-') || 'all',
          method: 'GET',
          identities,
          input: noInput,
          handler,
        }),
        ['user'],
      );
    const doc = document([
      action(['admin']),
      action(['user', 'admin']),
      action([]),
      action(['guest', 'user']),
    ]);
    const op = (name: string) => doc.paths[`/v1/s/${name}`]!.get!;
    expect(op('admin')).toMatchObject({
      security: [{ bearer: [] }],
      'x-identities': ['admin'],
      'x-error-codes': ['unauthenticated', 'forbidden', 'internal_error'],
    });
    expect(Object.keys(op('admin').responses as object)).toEqual(['200', '401', '403', '500']);
    expect(op('user-admin')['x-error-codes']).toEqual(['unauthenticated', 'internal_error']);
    expect(op('all')).toMatchObject({
      security: [{}, { bearer: [] }],
      'x-identities': ['guest', 'user', 'admin'],
    });
    expect(op('all')['x-error-codes']).toEqual(['internal_error']);
    // guests and users, not the admin
    expect(op('guest-user')['x-error-codes']).toEqual(['forbidden', 'internal_error']);
  });

  it('a body, a studio named in the input and a model to call each bring their errors', () => {
    const doc = documentOf([
      defineAction({
        service: 'ai',
        action: 'text',
        method: 'POST',
        bodyLimitBytes: 32 * 1024 * 1024,
        input: z.strictObject({ model: z.string(), studio_id: z.string().optional() }),
        handler,
      }),
    ]);
    const op = doc.paths['/v1/ai/text']!.post!;
    expect(op['x-error-codes']).toEqual([
      'invalid_json',
      'validation_failed',
      'unauthenticated',
      'budget_exceeded',
      'forbidden',
      'model_not_allowed',
      'studio_mismatch',
      'model_not_found',
      'payload_too_large',
      'unsupported_media_type',
      'rate_limited',
      'internal_error',
      'upstream_error',
      'overloaded',
      'upstream_timeout',
    ]);
    expect(op.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { type: 'object', required: ['model'] } } },
    });
  });

  it('describes errors with the one envelope, or the dialect’s own shape and credential header', () => {
    const dialect: WireDialect = {
      name: 'acme',
      credentialHeader: 'x-acme-key',
      errorBody: () => ({}),
      errorSchema: z.strictObject({ failure: z.string() }),
    };
    const doc = document([
      describeAction(
        defineAction({
          service: 'ai',
          action: 'acme/call',
          method: 'POST',
          dialect,
          input: z.object({}),
          handler,
        }),
        ['user'],
      ),
      describeAction(
        defineAction({ service: 'ai', action: 'plain', method: 'POST', input: z.object({}), handler }),
        ['user'],
      ),
    ]);
    const errorOf = (path: string) =>
      (doc.paths[path]!.post!.responses as Record<string, { content: Record<string, { schema: unknown }> }>)[
        '401'
      ]!.content['application/json']!.schema;
    expect(errorOf('/v1/ai/acme/call')).toEqual({ $ref: '#/components/schemas/AcmeError' });
    expect(errorOf('/v1/ai/plain')).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas.AcmeError).toMatchObject({ required: ['failure'] });
    expect(doc.components.schemas.Error).toMatchObject({ required: ['error'] });
    expect(doc.components.securitySchemes['x-acme-key']).toMatchObject({ type: 'apiKey', in: 'header' });
    expect(doc.paths['/v1/ai/acme/call']!.post!.security).toEqual([{ bearer: [] }, { 'x-acme-key': [] }]);
  });

  it('keeps recursive schemas among the components, so every reference resolves in the document', () => {
    type Tree = { name: string; children: Tree[] };
    const Tree: z.ZodType<Tree> = z.lazy(() => z.strictObject({ name: z.string(), children: z.array(Tree) }));
    const doc = document([
      describeRoute(
        defineEndpoint({
          method: 'POST',
          path: '/trees',
          input: z.strictObject({ tree: Tree }),
          output: Tree,
          handler,
        }),
        'trees',
      ),
    ]);
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const target = JSON.parse(`{${ref}}`).$ref as string;
      expect(target).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[target.slice('#/components/schemas/'.length)], target).toBeDefined();
    }
  });

  it('describes what a success answers besides JSON, and its status', () => {
    const doc = documentOf(
      [],
      [
        defineEndpoint({
          method: 'POST',
          path: '/jobs',
          status: 202,
          produces: ['application/json', 'text/event-stream'],
          output: z.strictObject({ id: z.string() }),
          input: z.object({}),
          handler,
        }),
      ],
    );
    expect((doc.paths['/jobs']!.post!.responses as Record<string, unknown>)['202']).toEqual({
      description: 'Accepted',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { id: { type: 'string' } },
            required: ['id'],
            additionalProperties: false,
          },
        },
        'text/event-stream': { schema: { type: 'string' } },
      },
    });
  });
});
