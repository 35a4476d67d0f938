import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { ApiError } from '../../shared/errors.ts';
import { logReadFailures, resubscribing } from '../../shared/event-store/resubscribe.ts';
import { isCaughtUp, type StoredEvent } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { type ActionContext, defineAction } from '../../shared/http/action.ts';
import { writeWithBackpressure } from '../../shared/http/backpressure.ts';
import { clientKeyOf } from '../../shared/http/client-key.ts';
import { onHeartbeat } from '../../shared/http/heartbeat.ts';
import type { OpenStreamLimit } from '../../shared/http/open-streams.ts';
import { headerOf } from '../../shared/http/request.ts';
import { rightsLost } from '../../shared/http/rights.ts';
import { openSse, sseComment, sseFrame } from '../../shared/http/sse.ts';
import { usageStreamId } from '../ai/usage/events.ts';
import { auditView, streamFilter, typeFilter } from './view.ts';

export interface FollowOptions {
  /** A comment every this many ms keeps proxies from closing a quiet stream. */
  heartbeatMs: number;
  /** Follows one client address may hold open at once. */
  openStreams: OpenStreamLimit;
  /** Follows one user token may hold open at once, wherever from (`MAX_FOLLOWS_PER_TOKEN`). */
  followsPerToken?: OpenStreamLimit;
  /** Aborted when the gateway closes: every follow ends so the server can. */
  closing: AbortSignal;
}

/** `Last-Event-ID` (a reconnecting client) wins over `?after=`: both are log positions. */
const lastEventId = z
  .string()
  .trim()
  .regex(/^\d{1,15}$/, 'Last-Event-ID must be a log position (a whole number)')
  .transform(Number);

/**
 * What a caller may follow: the admin any stream; a user token only its studio's usage stream
 * (`usage-<studio>`, its generations and budget reservations), which it follows when it names none.
 */
function followedStream(identity: ActionContext['identity'], stream: string | undefined): string | undefined {
  if (identity.kind !== 'user') return stream;
  const own = usageStreamId(identity.studioId);
  if (stream !== undefined && stream !== own)
    throw new ApiError('forbidden', `a user token may follow only its studio's usage stream (${own})`, {
      param: 'stream',
    });
  return own;
}

/** The follows one user token may hold open at once: a tenant's reading is bounded, whatever its addresses. */
export const MAX_FOLLOWS_PER_TOKEN = 8;
/** Events a user's follow reads at once from its studio's stream. */
const USER_BATCH = 100;

const frameOf = (event: StoredEvent) =>
  sseFrame({ id: event.position, event: event.type, data: JSON.stringify(auditView(event)) });

/**
 * `GET /v1/audit/events/follow`: the log's events as server-sent events (`id:` = position), those
 * stored after the resume point, then each one as it is appended; `caught_up` marks the switch.
 */
export function followAction(gw: GatewayContext, options: FollowOptions) {
  return defineAction({
    service: 'audit',
    action: 'events/follow',
    method: 'GET',
    identities: ['admin', 'user'],
    summary:
      'Follow the event log live (server-sent events, id = position); a user token follows its studio’s usage',
    input: z.strictObject({
      after: z.coerce.number().int().min(0).optional(),
      stream: streamFilter.optional(),
      type: typeFilter.optional(),
    }),
    handler: async (input, ctx) => {
      const stream = followedStream(ctx.identity, input.stream);
      const header = headerOf(ctx.req, 'last-event-id');
      const resumed = header === undefined ? undefined : lastEventId.safeParse(header);
      if (resumed && !resumed.success)
        throw new ApiError('validation_failed', 'Last-Event-ID must be a log position (a whole number)', {
          param: 'Last-Event-ID',
        });
      // Without a resume point, what is appended from now on.
      const after = resumed?.data ?? input.after ?? (await gw.events.headPosition());
      const byToken =
        ctx.identity.kind === 'user'
          ? options.followsPerToken?.acquire(`token:${ctx.identity.tokenId}`)
          : undefined;
      let byClient: () => void;
      try {
        byClient = options.openStreams.acquire(clientKeyOf(ctx.req.clientAddress));
      } catch (error) {
        byToken?.();
        throw error;
      }
      const release = () => {
        byClient();
        byToken?.();
      };
      const signal = AbortSignal.any([ctx.signal, options.closing]);
      openSse(ctx.res);
      const types = input.type === undefined ? undefined : new Set(input.type.split(','));
      const wanted = (event: StoredEvent) =>
        (stream === undefined || event.streamId === stream) && (types === undefined || types.has(event.type));
      void pump(gw, ctx.res, { after, wanted, signal, heartbeatMs: options.heartbeatMs, stream })
        .catch((error: unknown) => gw.logger.warn({ err: error }, 'audit follow ended on an error'))
        .finally(() => {
          release();
          if (ctx.res.writableEnded) return;
          // Its caller lost its rights (a token revoked, a studio paused): the last event says so.
          const lost = rightsLost(ctx.signal);
          if (lost)
            ctx.res.write(sseFrame({ event: 'error', data: JSON.stringify(lost.toBody(ctx.requestId)) }));
          ctx.res.end();
        });
      return undefined;
    },
  });
}

/**
 * Writes what the log holds after `after` and what comes, until the signal aborts. One subscription
 * per follower, read at the client's pace (`writeWithBackpressure`), so a slow client holds back
 * only its own reading, never memory.
 */
async function pump(
  gw: GatewayContext,
  res: ServerResponse,
  follow: {
    after: number;
    wanted(event: StoredEvent): boolean;
    signal: AbortSignal;
    heartbeatMs: number;
    stream: string | undefined;
  },
): Promise<void> {
  const { signal } = follow;
  const stopHeartbeat = onHeartbeat(follow.heartbeatMs, () => res.write(sseComment('heartbeat')));
  try {
    const onFailure = logReadFailures(gw.logger, 'audit follow cannot read the log; retrying', {
      stream: follow.stream,
    });
    // One stream (a user's follow always names its studio's): only that stream is read, from the
    // first of its events after the log position asked; else the whole log.
    const items = follow.stream
      ? resubscribing(gw.events, {
          streamId: follow.stream,
          after: await revisionBefore(gw, follow.stream, follow.after),
          batchSize: USER_BATCH,
          signal,
          onFailure,
        })
      : resubscribing(gw.events, { after: follow.after, signal, onFailure });
    // Where the follower stands in the log: `caught_up` says a log position, whichever was read.
    let position = follow.after;
    for await (const item of items) {
      if (signal.aborted) return;
      if (!isCaughtUp(item)) position = Math.max(position, item.position);
      else if (!follow.stream) position = item.position;
      const text = isCaughtUp(item)
        ? sseFrame({ event: 'caught_up', data: JSON.stringify({ position }) })
        : follow.wanted(item)
          ? frameOf(item)
          : undefined;
      if (text !== undefined) await writeWithBackpressure(res, text, signal);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    stopHeartbeat();
  }
}

/**
 * The revision of `streamId` after which its events come after log position `after`: positions
 * grow with revisions, so it is found by doubling, then halving, reading one event per step.
 */
async function revisionBefore(gw: GatewayContext, streamId: string, after: number): Promise<number> {
  /** Whether the event at `revision` exists and is at or before `after`. */
  const atOrBefore = async (revision: number) => {
    const [event] = await gw.events.readStream(streamId, { after: revision - 1, limit: 1 });
    return event !== undefined && event.position <= after;
  };
  let low = -1; // -1, or a revision at or before `after`
  let high = 0; // a revision past `after`, or past the stream's end
  while (await atOrBefore(high)) {
    low = high;
    high = high * 2 + 1;
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (await atOrBefore(middle)) low = middle;
    else high = middle;
  }
  return low;
}
