import { z } from 'zod';
import type { MessageView, SessionView } from '../../projections/sessions.ts';
import { ApiError } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { defineEndpoint, noInput, withStatus } from '../../shared/http/action.ts';
import { clientKeyOf } from '../../shared/http/client-key.ts';
import type { OpenStreamLimit } from '../../shared/http/open-streams.ts';
import { AttachmentSchema, MAX_ATTACHMENT_BYTES } from './attachments.ts';
import { eventView, resumePoint, streamSession } from './event-stream.ts';
import type { LiveBus } from './live.ts';
import {
  CompletedTurn,
  DeletedSession,
  HistoryPage,
  Message,
  pageOf,
  QueuedTurn,
  Session,
  SystemInfo,
} from './schemas.ts';
import type { SessionService } from './service.ts';
import { sessionStreamId } from './session.ts';
import type { StreamHub } from './stream-hub.ts';

/** The plugins' part of an agent's instructions: their system prompt, the running ones and their tools. */
export interface AgentSystem {
  pluginSystem: string;
  plugins: string[];
  tools: { name: string; description: string }[];
}

export interface SdkRouteDeps {
  sessions: SessionService;
  events: EventStore;
  hub: StreamHub;
  live: LiveBus;
  /** What the agent that runs this host's turns is given besides the session's own prompt. */
  agentSystem: () => Promise<AgentSystem>;
  model: string;
  heartbeatMs: number;
  /** Bounds the event streams one client holds open. */
  openStreams: OpenStreamLimit;
  /** Registers how to end an event stream when the process drains. */
  onDrain?: (goAway: () => void) => () => void;
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

const messageView = (m: MessageView) => ({
  id: m.id,
  role: m.role,
  parts: m.parts,
  created_at: m.created_at,
});
const sessionView = (v: SessionView) => v.session;

/** The session routes (`/api/sdk/*`): a small API that keeps a local agent and a remote client aligned. */
export function sdkRoutes(deps: SdkRouteDeps) {
  const { sessions } = deps;
  const base = '/api/sdk/sessions';
  // The session named in the path, looked up once the body is read and before it is parsed: an
  // unknown one is a 404 whatever the body holds.
  const params = z.object({ id: z.string() }).transform(({ id }) => sessions.require(id));

  return [
    defineEndpoint({
      method: 'GET',
      path: base,
      input: z.strictObject({ limit, cursor }),
      output: pageOf(Session),
      handler: (q) => {
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
      },
    }),

    defineEndpoint({
      method: 'POST',
      path: base,
      status: 201,
      output: Session,
      input: z.strictObject({
        title: z.string().max(200).optional(),
        model: z.string().min(1).max(200).optional(),
        system: z.string().max(100_000).optional(),
      }),
      handler: async (body) => {
        const view = await sessions.create({
          kind: 'sdk',
          title: body.title ?? '',
          model: body.model ?? deps.model,
          system: body.system ?? '',
        });
        return sessionView(view);
      },
    }),

    defineEndpoint({
      method: 'GET',
      path: `${base}/:id`,
      params,
      input: noInput,
      output: Session,
      handler: (_input, { params: view }) => sessionView(view),
    }),

    defineEndpoint({
      method: 'DELETE',
      path: `${base}/:id`,
      params,
      input: noInput,
      output: DeletedSession,
      // Its events stay in the log (an audit trail); the session leaves the list and every route.
      handler: async (_input, { params: { session } }) => {
        await sessions.delete(session.id);
        return { id: session.id, deleted: true as const };
      },
    }),

    defineEndpoint({
      method: 'GET',
      path: `${base}/:id/history`,
      params,
      output: HistoryPage,
      input: z.strictObject({
        after: z.coerce.number().int().min(-1).default(-1),
        limit: z.coerce.number().int().min(1).max(1000).default(200),
      }),
      handler: async (q, { params: { session } }) => {
        const events = await deps.events.readStream(sessionStreamId(session.id), {
          after: q.after,
          limit: q.limit,
        });
        return {
          items: events.map(eventView),
          next_after: events.length === q.limit ? events.at(-1)!.revision : null,
        };
      },
    }),

    defineEndpoint({
      method: 'GET',
      path: `${base}/:id/messages`,
      params,
      output: pageOf(Message),
      input: z.strictObject({ limit, cursor }),
      handler: (q, { params: view }) => {
        const after = decodeCursor(q.cursor);
        const start = after === undefined ? 0 : view.messages.findIndex((m) => m.id === after) + 1;
        if (after !== undefined && start === 0)
          throw new ApiError('validation_failed', 'unknown cursor', { param: 'cursor' });
        const items = view.messages.slice(start, start + q.limit);
        const more = start + q.limit < view.messages.length;
        return { items: items.map(messageView), next_cursor: more ? encodeCursor(items.at(-1)!.id) : null };
      },
    }),

    defineEndpoint({
      method: 'GET',
      path: `${base}/:id/system`,
      params,
      output: SystemInfo,
      input: noInput,
      handler: async (_input, { params: { session } }) => {
        const agent = await deps.agentSystem();
        return {
          model: session.model,
          system: session.system,
          plugin_system: agent.pluginSystem,
          plugins: agent.plugins,
          tools: agent.tools,
        };
      },
    }),

    defineEndpoint({
      method: 'POST',
      path: `${base}/:id/prompt`,
      params,
      // 200 with the turn when it waited; 202 when it was only queued.
      output: z.union([CompletedTurn, QueuedTurn]),
      input: z.strictObject({
        text: z.string().refine((t) => t.trim().length > 0, 'text must not be empty'),
        attachments: z.array(AttachmentSchema).max(20).optional(),
        wait: z.boolean().default(true),
      }),
      bodyLimitBytes: 8 * MAX_ATTACHMENT_BYTES,
      handler: async (body, { params: { session } }) => {
        const result = await sessions.prompt(session.id, { ...body, source: 'sdk' });
        if (result.queued)
          return withStatus(202, {
            queued: true,
            queueItemId: result.turnId,
            queuePosition: result.queuePosition,
          });
        return {
          turn_id: result.turnId,
          status: result.status,
          message: result.message ? messageView(result.message) : null,
        };
      },
    }),

    defineEndpoint({
      method: 'POST',
      path: `${base}/:id/fork`,
      params,
      status: 201,
      output: Session,
      input: z.strictObject({ at_revision: z.number().int().optional() }),
      handler: async (body, { params: { session } }) =>
        sessionView(await sessions.fork(session.id, body.at_revision)),
    }),

    defineEndpoint({
      method: 'GET',
      path: `${base}/:id/events`,
      params,
      produces: ['text/event-stream'],
      input: noInput,
      handler: async (_input, { params: { session }, req, res }) => {
        const after = resumePoint(req);
        const release = deps.openStreams.acquire(clientKeyOf(req.clientAddress));
        res.once('close', release);
        await streamSession(res, {
          events: deps.events,
          hub: deps.hub,
          live: deps.live,
          sessionId: session.id,
          after,
          heartbeatMs: deps.heartbeatMs,
          ...(deps.onDrain ? { onDrain: deps.onDrain } : {}),
        });
        return undefined;
      },
    }),
  ];
}
