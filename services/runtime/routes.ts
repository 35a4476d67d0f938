import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { MessageView } from '../../projections/sessions.ts';
import { secretEquals } from '../../shared/crypto.ts';
import { ApiError } from '../../shared/errors.ts';
import { readJsonBody } from '../../shared/http/app.ts';
import { validationError } from '../../shared/http/errors.ts';
import type { SessionService, TurnOutcome } from '../sessions/service.ts';
import { type Attachment, AttachmentSchema, MAX_ATTACHMENT_BYTES, materialize } from './attachments.ts';
import type { PluginManager } from './plugins/manager.ts';

export interface RuntimeRouteDeps {
  plugins: PluginManager;
  sessions: SessionService;
  workspace: string;
  model: string;
  /** When set, every `/api/*` route needs `Authorization: Bearer <token>`. */
  runtimeToken: string | undefined;
  chat: {
    isConversation(id: string): boolean;
    receiveFromDashboard(id: string, text: string): Promise<unknown>;
  };
  status: () => Record<string, unknown>;
  /** The body of GET /health: `status` ok or degraded, and why. */
  health: () => Record<string, unknown>;
}

const BODY_LIMIT = 1024 * 1024;
const DASHBOARD_BODY_LIMIT = 8 * MAX_ATTACHMENT_BYTES;
const sessionId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'letters, digits, "_" or "-"');

type Handler = (req: Request, res: Response) => Promise<unknown>;

/** Wraps a handler: JSON body read up to `limit`, errors to the envelope, `{success: true, …}` answers. */
const route =
  (handler: Handler, limit = BODY_LIMIT) =>
  async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.method === 'POST') await readJsonBody(req, res, limit);
      const result = await handler(req, res);
      if (!res.headersSent) res.json({ success: true, ...(result as object) });
    } catch (error) {
      next(error);
    }
  };

function parse<T>(schema: z.ZodType<T>, req: Request): T {
  const raw = req.method === 'GET' ? { ...req.query } : req.body;
  if (req.method === 'POST' && raw === undefined && Number(req.header('content-length') ?? 0) > 0) {
    throw new ApiError('invalid_json', 'the request body must be JSON (Content-Type: application/json)');
  }
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw validationError(parsed.error, req.method === 'GET' ? 'query' : 'body');
  return parsed.data;
}

function lastAssistant(messages: readonly MessageView[], turnId: string): MessageView | undefined {
  return messages.filter((m) => m.turn_id === turnId && m.role === 'assistant').at(-1);
}

function outcomeOrThrow(outcome: TurnOutcome): void {
  if (outcome.status === 'failed') throw new ApiError('upstream_error', `the turn failed: ${outcome.error}`);
  if (outcome.status === 'cancelled')
    throw new ApiError('conflict', `the turn was cancelled: ${outcome.reason}`);
}

export function mountRuntimeRoutes(app: Express, deps: RuntimeRouteDeps): void {
  const { plugins, sessions } = deps;

  app.get('/health', (_req, res) => {
    res.json(deps.health());
  });

  app.use('/api', (req, _res, next) => {
    if (deps.runtimeToken === undefined) return next();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.header('authorization') ?? '');
    if (match && secretEquals(match[1]!, deps.runtimeToken)) return next();
    next(new ApiError('unauthenticated', 'this runtime needs Authorization: Bearer <STUDIO_RUNTIME_TOKEN>'));
  });

  app.get('/api/status', (_req, res) => {
    res.json({
      name: 'studio-runtime',
      status: 'running',
      timestamp: new Date().toISOString(),
      ...deps.status(),
    });
  });

  /** Runs one turn and answers with its final message. */
  async function runTurn(id: string, text: string, source: string, attachments: Attachment[] = []) {
    const files = await materialize(deps.workspace, id, attachments);
    const instruction = files.tags ? `${files.tags}\n\n${text}` : text;
    const queued = await sessions.enqueue(id, { text: instruction, attachments: files.files, source });
    const outcome = await queued.done;
    outcomeOrThrow(outcome);
    const message = lastAssistant(sessions.require(id).messages, queued.turnId);
    return {
      sessionId: id,
      turnId: queued.turnId,
      message: message ? { id: message.id, role: message.role, parts: message.parts } : null,
    };
  }

  app.post(
    '/api/execute',
    route(async (req) => {
      const input = parse(
        z.strictObject({
          instructions: z.string().trim().min(1, 'instructions must not be empty'),
          chatId: sessionId.optional(),
        }),
        req,
      );
      let id = input.chatId;
      if (id === undefined || !sessions.get(id)) {
        id = (
          await sessions.create({
            sessionId: id,
            kind: 'api',
            title: input.instructions.slice(0, 80),
            model: deps.model,
            system: '',
          })
        ).session.id;
      }
      return runTurn(id, input.instructions, 'execute');
    }),
  );

  app.get(
    '/api/dashboard/sessions',
    route(async () => {
      return {
        sessions: sessions
          .list()
          .map((v) => v.session)
          .sort((a, b) => b.updated_at.localeCompare(a.updated_at)),
      };
    }),
  );

  app.post(
    '/api/dashboard/sessions/:sessionId/execute',
    route(async (req) => {
      const id = String(req.params.sessionId);
      const input = parse(
        z.strictObject({
          instructions: z.string().trim().min(1, 'instructions must not be empty'),
          attachments: z.array(AttachmentSchema).max(20).optional(),
        }),
        req,
      );
      if (deps.chat.isConversation(id)) {
        const files = await materialize(deps.workspace, id, input.attachments ?? []);
        const text = files.tags ? `${files.tags}\n\n${input.instructions}` : input.instructions;
        const receipt = (await deps.chat.receiveFromDashboard(id, text)) as {
          queueItemId: string;
          queuePosition: number;
        };
        return {
          sessionId: id,
          queued: true,
          queueItemId: receipt.queueItemId,
          queuePosition: receipt.queuePosition,
        };
      }
      sessions.require(id);
      return runTurn(id, input.instructions, 'dashboard', input.attachments);
    }, DASHBOARD_BODY_LIMIT),
  );

  const pluginName = z.string().min(1).max(100);

  app.get(
    '/api/plugins/list',
    route(async () => ({ plugins: await Promise.all(plugins.list().map((p) => plugins.status(p.name))) })),
  );

  app.post(
    '/api/plugins/control',
    route(async (req) => {
      const input = parse(
        z.strictObject({ pluginName, action: z.enum(['start', 'stop', 'restart', 'status']) }),
        req,
      );
      const plugin = await plugins[input.action](input.pluginName);
      return { plugin };
    }),
  );

  app.post(
    '/api/plugins/availability',
    route(async (req) => {
      const input = parse(z.strictObject({ pluginName }), req);
      return { pluginName: input.pluginName, availability: await plugins.availability(input.pluginName) };
    }),
  );

  app.post(
    '/api/plugins/action',
    route(async (req) => {
      const input = parse(
        z.strictObject({
          pluginName,
          actionName: z.string().min(1).max(200),
          payload: z.record(z.string(), z.unknown()).default({}),
        }),
        req,
      );
      const result = await plugins.run({
        plugin: input.pluginName,
        action: input.actionName,
        input: input.payload,
        source: 'api',
      });
      return { result };
    }),
  );

  app.post(
    '/api/plugins/command',
    route(async (req) => {
      const input = parse(
        z.strictObject({
          pluginName,
          command: z.string().min(1).max(200),
          payload: z.record(z.string(), z.unknown()).default({}),
        }),
        req,
      );
      const action = plugins.action(input.pluginName, input.command);
      if (!action.supportsCommand)
        throw new ApiError('not_found', `${input.pluginName}.${input.command} is not a command`, {
          param: 'command',
        });
      const result = await plugins.run({
        plugin: input.pluginName,
        action: input.command,
        input: input.payload,
        source: 'command',
      });
      return { result };
    }),
  );

  app.get(
    '/api/plugins/catalog',
    route(async () => ({
      plugins: plugins.list().map((p) => ({
        name: p.name,
        version: p.version,
        description: p.description,
        requires: p.requires,
        actions: p.actions.map((a) => ({
          name: a.name,
          description: a.description,
          supportsCommand: a.supportsCommand ?? false,
          supportsApi: a.supportsApi ?? false,
          apiMethod: a.apiMethod ?? '',
          apiPath: a.apiPath ?? '',
        })),
      })),
    })),
  );

  app.get(
    '/api/ui/plugins',
    route(async () => ({
      plugins: await Promise.all(
        plugins.list().map(async (p) => ({
          name: p.name,
          actions: p.actions.map((a) => a.name),
          pipelines: (p.pipelines ?? []).map((x) => x.name),
          guards: (p.guards ?? []).map((x) => x.name),
          effects: (p.effects ?? []).map((x) => x.name),
          resolves: (p.resolves ?? []).map((x) => x.name),
          hasSystem: p.system !== undefined,
          hasAvailability: p.availability !== undefined,
          availability: await plugins.availability(p.name),
          config: {
            actions: p.actions.map((a) => ({
              name: a.name,
              supportsCommand: a.supportsCommand ?? false,
              supportsApi: a.supportsApi ?? false,
              apiMethod: a.apiMethod ?? '',
              apiPath: a.apiPath ?? '',
            })),
          },
        })),
      ),
    })),
  );

  // Actions that ask for it are also served at their own method and path.
  for (const plugin of plugins.list()) {
    for (const action of plugin.actions) {
      if (!action.supportsApi || !action.apiPath) continue;
      const method = action.apiMethod === 'GET' ? 'get' : 'post';
      app[method](
        action.apiPath,
        route(async (req) => {
          const payload = req.method === 'GET' ? { ...req.query } : (req.body ?? {});
          const result = await plugins.run({
            plugin: plugin.name,
            action: action.name,
            input: payload,
            source: 'api',
          });
          return typeof result === 'object' && result !== null && !Array.isArray(result)
            ? result
            : { result };
        }),
      );
    }
  }
}
