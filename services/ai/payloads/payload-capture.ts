import type { GatewayContext } from '../../../shared/gateway-context.ts';
import type { ActionContext, UploadedFile } from '../../../shared/http/action.ts';
import { type CaptureSettings, DEFAULT_CAPTURE, type PayloadEvent, payloadsStreamId } from './capture.ts';
import { captureProjection } from './read-model.ts';
import type { StudioKeys } from './studio-keys.ts';

/** The most of each body (request, answer) a captured payload keeps; beyond it the body is cut. */
export const MAX_CAPTURED_BYTES = 1 << 20;

/** A captured request as `GET /v1/ai/requests/{id}` shows it. */
export type PayloadView =
  | { erased: true }
  | {
      erased: false;
      truncated: boolean;
      request: unknown;
      response: { status: number; content_type: string | null; body: string };
    };

/**
 * Captures the bodies of generation requests of studios that capture in `full`: the request as
 * parsed (files as their name, type and size), the answer as written (JSON or every SSE frame),
 * each up to `MAX_CAPTURED_BYTES`; sealed under the studio's key of the day and appended once the
 * answer is over. Never in the way of the answer: a capture that fails is logged, not raised.
 */
export class PayloadCapture {
  readonly #pending = new Set<Promise<unknown>>();

  constructor(
    private readonly gw: GatewayContext,
    private readonly keys: StudioKeys,
  ) {}

  settingsOf(studioId: string): CaptureSettings {
    return this.gw.projections.state(captureProjection).get(studioId) ?? DEFAULT_CAPTURE;
  }

  /** Whether error messages (an upstream's may echo the prompt) are kept for the studio. */
  keepsMessages(studioId: string): boolean {
    return this.settingsOf(studioId).mode !== 'none';
  }

  /** Starts capturing the answer to `ctx`'s request, when its studio captures in full. */
  begin(ctx: ActionContext): void {
    const identity = ctx.identity;
    if (identity.kind !== 'user' || this.settingsOf(identity.studioId).mode !== 'full') return;
    const request = bodyOf(ctx.req.body);
    const answer = tap(ctx.res);
    ctx.res.once('close', () => {
      const storing = this.#store(identity.studioId, ctx.requestId, {
        truncated: request.truncated || answer.truncated(),
        request: request.body,
        response: {
          status: ctx.res.statusCode,
          content_type: String(ctx.res.getHeader('content-type') ?? '') || null,
          body: answer.text(),
        },
      }).catch((error: unknown) =>
        this.gw.logger.warn({ err: error, requestId: ctx.requestId }, 'a payload could not be captured'),
      );
      this.#pending.add(storing);
      void storing.finally(() => this.#pending.delete(storing));
    });
  }

  /**
   * Keeps a call's bodies when its studio captures in full (a tool call through `/v1/mcp`):
   * appended in the background like a generation's; a failure is logged.
   */
  keep(studioId: string, requestId: string, request: unknown, response: unknown): void {
    if (this.settingsOf(studioId).mode !== 'full') return;
    const { body, truncated } = bodyOf({ request, response });
    const storing = this.#store(studioId, requestId, {
      truncated,
      ...(truncated ? { request: body, response: null } : (body as { request: unknown; response: unknown })),
    }).catch((error: unknown) =>
      this.gw.logger.warn({ err: error, requestId }, 'a payload could not be captured'),
    );
    this.#pending.add(storing);
    void storing.finally(() => this.#pending.delete(storing));
  }

  async #store(
    studioId: string,
    requestId: string,
    payload: { truncated: boolean; request: unknown; response: unknown },
  ): Promise<void> {
    const { keyId, box } = await this.keys.current(studioId);
    const plain = JSON.stringify({ request: payload.request, response: payload.response });
    const event: PayloadEvent = {
      type: 'PayloadCaptured',
      data: {
        studioId,
        requestId,
        keyId,
        sealed: box.encrypt(plain),
        bytes: Buffer.byteLength(plain),
        truncated: payload.truncated,
      },
    };
    await this.gw.events.append(payloadsStreamId(studioId), [event], {
      expected: 'any',
      metadata: { actor: 'gateway', requestId },
    });
  }

  /** The payload of the event at `revision` of the studio's payload stream, or that it was erased. */
  async read(studioId: string, revision: number): Promise<PayloadView | undefined> {
    const [event] = await this.gw.events.readStream(payloadsStreamId(studioId), {
      after: revision - 1,
      limit: 1,
    });
    if (event?.type !== 'PayloadCaptured') return undefined;
    const data = event.data as PayloadEvent['data'];
    const box = await this.keys.open(data.keyId);
    if (!box) return { erased: true };
    const opened = JSON.parse(box.decrypt(data.sealed)) as Omit<
      PayloadView & { erased: false },
      'erased' | 'truncated'
    >;
    return { erased: false, truncated: data.truncated, ...opened };
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}

/** The request as parsed: files as what they are, never their bytes; cut at the bound. */
function bodyOf(body: unknown): { body: unknown; truncated: boolean } {
  const shown = JSON.stringify(body ?? null, (_key, value: unknown) =>
    isFile(value) ? { file: value.filename, type: value.type, bytes: value.data.length } : value,
  );
  if (Buffer.byteLength(shown) <= MAX_CAPTURED_BYTES) return { body: JSON.parse(shown), truncated: false };
  return { body: Buffer.from(shown).subarray(0, MAX_CAPTURED_BYTES).toString('utf8'), truncated: true };
}

const isFile = (value: unknown): value is UploadedFile =>
  typeof value === 'object' &&
  value !== null &&
  'data' in value &&
  Buffer.isBuffer((value as UploadedFile).data);

/** Keeps what is written to `res` (up to the bound) while passing it on untouched. */
function tap(res: ActionContext['res']) {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let cut = false;
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buffer = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array);
    const room = MAX_CAPTURED_BYTES - bytes;
    if (buffer.length > room) cut = true;
    if (room <= 0) return;
    const kept = buffer.subarray(0, room);
    chunks.push(Buffer.from(kept));
    bytes += kept.length;
  };
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return (end as (...args: unknown[]) => typeof res)(chunk, ...rest);
  }) as typeof res.end;
  return { text: () => Buffer.concat(chunks).toString('utf8'), truncated: () => cut };
}
