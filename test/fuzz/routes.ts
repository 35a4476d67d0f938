import { z } from 'zod';
import { AttachmentSchema } from '../../services/sessions/attachments.ts';
import type { ActionRegistry } from '../../shared/http/registry.ts';
import type { JsonSchema } from './from-schema.ts';

export interface FuzzRoute {
  server: 'gateway' | 'runtime';
  method: 'GET' | 'POST';
  /** `:id` marks where an id goes. */
  path: string;
  /** What the route reads: the body (POST) or the query (GET). */
  input: JsonSchema;
  /** Commands an admin may run on the fixtures are given no fixture ids, so the data made before the run stays. */
  destructive: boolean;
  /** SSE: the answer is a stream that stays open; only its status and headers are judged. */
  stream?: boolean;
  /** Answers a browser with an HTML page, failures included (the OAuth callback). */
  page?: boolean;
}

const schemaOf = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as JsonSchema;

/** Every action of the gateway's registry, with the JSON Schema of its input. */
export function gatewayRoutes(registry: ActionRegistry): FuzzRoute[] {
  const routes: FuzzRoute[] = [
    { server: 'gateway', method: 'GET', path: '/health', input: {}, destructive: false },
    { server: 'gateway', method: 'GET', path: '/ready', input: {}, destructive: false },
    { server: 'gateway', method: 'GET', path: '/v1/services', input: {}, destructive: false },
  ];
  for (const service of registry.services()) {
    for (const action of service.actions) {
      routes.push({
        server: 'gateway',
        method: action.method,
        path: `/v1/${action.service}/${action.action}`,
        input: schemaOf(action.input),
        destructive: action.method === 'POST',
        stream: action.action === 'stream',
        page: action.action === 'oauth/callback',
      });
    }
  }
  return routes;
}

const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  required,
});
const str: JsonSchema = { type: 'string' };
const attachments: JsonSchema = { type: 'array', items: schemaOf(AttachmentSchema) };
const page = object({ limit: { type: 'integer', minimum: 1, maximum: 200 }, cursor: str });

/** Every route of the runtime and of the session API. */
export const RUNTIME_ROUTES: FuzzRoute[] = [
  ...(
    [
      ['GET', '/health', {}],
      ['GET', '/api/status', {}],
      ['POST', '/api/execute', object({ instructions: str, chatId: str }, ['instructions'])],
      ['GET', '/api/dashboard/sessions', {}],
      [
        'POST',
        '/api/dashboard/sessions/:id/execute',
        object({ instructions: str, attachments }, ['instructions']),
      ],
      ['GET', '/api/plugins/list', {}],
      ['GET', '/api/plugins/catalog', {}],
      ['GET', '/api/ui/plugins', {}],
      ['POST', '/api/plugins/availability', object({ pluginName: str }, ['pluginName'])],
      [
        'POST',
        '/api/plugins/action',
        object({ pluginName: str, actionName: str, payload: { type: 'object' } }, [
          'pluginName',
          'actionName',
        ]),
      ],
      [
        'POST',
        '/api/plugins/command',
        object({ pluginName: str, command: str, payload: { type: 'object' } }, ['pluginName', 'command']),
      ],
      ['POST', '/api/files/read', object({ path: str }, ['path'])],
      ['POST', '/api/files/write', object({ path: str, content: str }, ['path', 'content'])],
      ['POST', '/api/files/list', object({ path: str })],
      [
        'POST',
        '/api/chat/inbound',
        object({ platform: str, channel: str, text: str, sender: str }, ['platform', 'channel', 'text']),
      ],
      ['GET', '/api/sdk/sessions', page],
      ['POST', '/api/sdk/sessions', object({ title: str, model: str, system: str })],
      ['GET', '/api/sdk/sessions/:id', {}],
      [
        'GET',
        '/api/sdk/sessions/:id/history',
        object({
          after: { type: 'integer', minimum: -1, maximum: 100 },
          limit: { type: 'integer', minimum: 1, maximum: 1000 },
        }),
      ],
      ['GET', '/api/sdk/sessions/:id/messages', page],
      ['GET', '/api/sdk/sessions/:id/system', {}],
      [
        'POST',
        '/api/sdk/sessions/:id/prompt',
        object({ text: str, attachments, wait: { type: 'boolean' } }, ['text']),
      ],
      [
        'POST',
        '/api/sdk/sessions/:id/fork',
        object({ at_revision: { type: 'integer', minimum: -1, maximum: 50 } }),
      ],
    ] as const
  ).map(([method, path, input]) => ({
    server: 'runtime' as const,
    method,
    path,
    input: input as JsonSchema,
    destructive: false,
  })),
  {
    server: 'runtime',
    method: 'POST',
    path: '/api/plugins/control',
    input: object({ pluginName: str, action: { enum: ['start', 'stop', 'restart', 'status'] } }, [
      'pluginName',
      'action',
    ]),
    destructive: true,
  },
  {
    server: 'runtime',
    method: 'GET',
    path: '/api/sdk/sessions/:id/events',
    input: object({ after: { type: 'integer', minimum: -1, maximum: 100 } }),
    destructive: false,
    stream: true,
  },
];
