import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { MessageView, SessionView } from '../../projections/sessions.ts';
import { ApiError } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { readJsonBody } from '../../shared/http/app.ts';
import { clientKeyOf } from '../../shared/http/client-key.ts';
import { validationError } from '../../shared/http/errors.ts';
import type { OpenStreamLimit } from '../../shared/http/open-streams.ts';
import {
  type Attachment,
  AttachmentSchema,
  MAX_ATTACHMENT_BYTES,
  materialize,
} from '../runtime/attachments.ts';
import type { LiveBus } from '../runtime/live.ts';
import type { PluginManager } from '../runtime/plugins/manager.ts';
import type { SessionService } from './service.ts';
import { sessionStreamId } from './session.ts';
import { eventView, resumePoint, streamSession } from './sse.ts';
import type { StreamHub } from './stream-hub.ts';

export interface SdkRouteDeps {
  sessions: SessionService;
  events: EventStore;
  hub: StreamHub;
  live: LiveBus;
  plugins: PluginManager;
  workspace: string;
  model: string;
  heartbeatMs: number;
  /** Bounds the event streams one client holds open. */
  openStreams: OpenStreamLimit;
}

const limit = z.coerce.number().int().min(1).max(200).default(50);
const cursor = z.string().max(500).optional();

const encodeCursor = (value: string) => Buffer.from(value).toString('base64url');
function decodeCursor(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const decoded = Buffer.from(value, 'base64url').toString('utf8');
  if (!decoded)
    throw new ApiError('validation_failed', 'cursor is not one this server gave out', { param: 'cursor' });
  return decoded;
}

function parse<T>(schema: z.ZodType<T>, raw: unknown, where: 'body' | 'query'): T {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw validationError(parsed.error, where);
  return parsed.data;
}

const handle =
  (handler: (req: Request, res: Response) => Promise<unknown>, bodyLimit = 1024 * 1024) =>
  async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.method === 'POST') await readJsonBody(req, res, bodyLimit);
      const result = await handler(req, res);
      if (!res.headersSent && result !== undefined) res.json(result);
    } catch (error) {
      next(error);
    }
  };

const messageView = (m: MessageView) => ({
  id: m.id,
  role: m.role,
  parts: m.parts,
  created_at: m.created_at,
});
const sessionView = (v: SessionView) => v.session;

/** The session routes (`/api/sdk/*`): a small API that keeps a local agent and a remote client aligned. */
export function mountSdkRoutes(app: Express, deps: SdkRouteDeps): void {
  const { sessions } = deps;
  const base = '/api/sdk/sessions';
  const find = (req: Request) => sessions.require(String(req.params.id));

  app.get(
    base,
    handle(async (req) => {
      const q = parse(z.strictObject({ limit, cursor }), { ...req.query }, 'query');
      const after = decodeCursor(q.cursor);
      const all = sessions
        .list()
        .map((v) => v.session)
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
      const start = after === undefined ? 0 : all.findIndex((s) => `${s.created_at}|${s.id}` === after) + 1;
      if (after !== undefined && start === 0)
        throw new ApiError('validation_failed', 'unknown cursor', { param: 'cursor' });
      const items = all.slice(start, start + q.limit);
      const last = items.at(-1);
      const more = start + q.limit < all.length;
      return { items, next_cursor: more && last ? encodeCursor(`${last.created_at}|${last.id}`) : null };
    }),
  );

  app.post(
    base,
    handle(async (req, res) => {
      const body = parse(
        z.strictObject({
          title: z.string().max(200).optional(),
          model: z.string().min(1).max(200).optional(),
          system: z.string().max(100_000).optional(),
        }),
        req.body,
        'body',
      );
      const view = await sessions.create({
        kind: 'sdk',
        title: body.title ?? '',
        model: body.model ?? deps.model,
        system: body.system ?? '',
      });
      res.status(201);
      return sessionView(view);
    }),
  );

  app.get(
    `${base}/:id`,
    handle(async (req) => sessionView(find(req))),
  );

  app.get(
    `${base}/:id/history`,
    handle(async (req) => {
      const { session } = find(req);
      const q = parse(
        z.strictObject({
          after: z.coerce.number().int().min(-1).default(-1),
          limit: z.coerce.number().int().min(1).max(1000).default(200),
        }),
        { ...req.query },
        'query',
      );
      const events = await deps.events.readStream(sessionStreamId(session.id), {
        after: q.after,
        limit: q.limit,
      });
      return {
        items: events.map(eventView),
        next_after: events.length === q.limit ? events.at(-1)!.revision : null,
      };
    }),
  );

  app.get(
    `${base}/:id/messages`,
    handle(async (req) => {
      const view = find(req);
      const q = parse(z.strictObject({ limit, cursor }), { ...req.query }, 'query');
      const after = decodeCursor(q.cursor);
      const start = after === undefined ? 0 : view.messages.findIndex((m) => m.id === after) + 1;
      if (after !== undefined && start === 0)
        throw new ApiError('validation_failed', 'unknown cursor', { param: 'cursor' });
      const items = view.messages.slice(start, start + q.limit);
      const more = start + q.limit < view.messages.length;
      return { items: items.map(messageView), next_cursor: more ? encodeCursor(items.at(-1)!.id) : null };
    }),
  );

  app.get(
    `${base}/:id/system`,
    handle(async (req) => {
      const { session } = find(req);
      const plugins = (await Promise.all(deps.plugins.list().map((p) => deps.plugins.status(p.name)))).filter(
        (p) => p.state === 'running',
      );
      return {
        model: session.model,
        system: session.system,
        plugin_system: deps.plugins.systemPrompt(),
        plugins: plugins.map((p) => p.name),
        tools: deps.plugins
          .tools()
          .map((t) => ({ name: t.function.name, description: t.function.description })),
      };
    }),
  );

  app.post(
    `${base}/:id/prompt`,
    handle(async (req, res) => {
      const { session } = find(req);
      const body = parse(
        z.strictObject({
          text: z.string().refine((t) => t.trim().length > 0, 'text must not be empty'),
          attachments: z.array(AttachmentSchema).max(20).optional(),
          wait: z.boolean().default(true),
        }),
        req.body,
        'body',
      );
      const files = await materialize(deps.workspace, session.id, (body.attachments ?? []) as Attachment[]);
      const text = files.tags ? `${files.tags}\n\n${body.text}` : body.text;
      const queued = await sessions.enqueue(session.id, { text, attachments: files.files, source: 'sdk' });
      if (!body.wait) {
        res.status(202);
        return { queued: true, queueItemId: queued.turnId, queuePosition: queued.queuePosition };
      }
      const outcome = await queued.done;
      if (outcome.status === 'failed')
        throw new ApiError('upstream_error', `the turn failed: ${outcome.error}`);
      if (outcome.status === 'cancelled')
        throw new ApiError('conflict', `the turn was cancelled: ${outcome.reason}`);
      const message = sessions
        .require(session.id)
        .messages.filter((m) => m.turn_id === queued.turnId && m.role === 'assistant')
        .at(-1);
      return {
        turn_id: queued.turnId,
        status: outcome.status,
        message: message ? messageView(message) : null,
      };
    }, 8 * MAX_ATTACHMENT_BYTES),
  );

  app.post(
    `${base}/:id/fork`,
    handle(async (req, res) => {
      const { session } = find(req);
      const body = parse(z.strictObject({ at_revision: z.number().int().optional() }), req.body, 'body');
      const fork = await sessions.fork(session.id, body.at_revision);
      res.status(201);
      return sessionView(fork);
    }),
  );

  app.get(
    `${base}/:id/events`,
    handle(async (req, res) => {
      const { session } = find(req);
      const after = resumePoint(req);
      const release = deps.openStreams.acquire(clientKeyOf(req.socket.remoteAddress));
      res.once('close', release);
      await streamSession(res, {
        events: deps.events,
        hub: deps.hub,
        live: deps.live,
        sessionId: session.id,
        after,
        heartbeatMs: deps.heartbeatMs,
      });
      return undefined;
    }),
  );
}
