import type { EventStreamCodec, Message } from '@smithy/eventstream-codec';
import { ApiError } from '../../../../shared/errors.ts';
import { isBodyTimeout, type UpstreamResponse } from '../../upstream.ts';

/**
 * AWS's event stream encoding (`application/vnd.amazon.eventstream`): binary frames, each a 4-byte
 * total length, a 4-byte headers length, a prelude CRC, headers, payload and a message CRC. TCP cuts
 * them anywhere, so bytes are gathered until a whole frame is there; the SDK's codec checks both
 * CRCs and parses the headers.
 */
let codec: Promise<EventStreamCodec> | undefined;
/** The SDK's codec, loaded at the first event stream: a gateway that never calls Bedrock never loads it. */
const loadCodec = () =>
  (codec ??= Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]).then(
    ([{ EventStreamCodec }, { fromUtf8, toUtf8 }]) => new EventStreamCodec(toUtf8, fromUtf8),
  ));
const UTF8 = new TextDecoder();
const PRELUDE = 12;
const MIN_FRAME = 16;
/** The format's own limit on one message. */
const MAX_FRAME = 16 * 1024 * 1024;

/** One frame: `event` (named by `:event-type`), `exception` (by `:exception-type`) or `error` (by `:error-code`). */
export interface StreamFrame {
  kind: 'event' | 'exception' | 'error';
  name: string;
  /** The payload parsed as JSON (an empty object when it is empty). */
  payload: Record<string, unknown>;
}

const header = (message: Message, name: string): string | undefined => {
  const value = message.headers[name];
  return value?.type === 'string' ? value.value : undefined;
};

function frameOf(message: Message): StreamFrame {
  const type = header(message, ':message-type') ?? 'event';
  const text = UTF8.decode(message.body);
  let payload: unknown = {};
  if (text.trim()) {
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
  }
  if (type === 'error') {
    // Errors carry their code and message in headers, not in the payload.
    return {
      kind: 'error',
      name: header(message, ':error-code') ?? 'error',
      payload: { message: header(message, ':error-message') ?? '' },
    };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    throw new ApiError('upstream_error', 'the upstream sent an event whose payload is not a JSON object');
  if (type === 'exception')
    return {
      kind: 'exception',
      name: header(message, ':exception-type') ?? 'exception',
      payload: payload as Record<string, unknown>,
    };
  return {
    kind: 'event',
    name: header(message, ':event-type') ?? '',
    payload: payload as Record<string, unknown>,
  };
}

/** Splits bytes as they arrive into whole frames. */
export async function frameSplitter() {
  const decoder = await loadCodec();
  let pending = Buffer.alloc(0);
  return {
    push(chunk: Uint8Array): Message[] {
      pending = pending.length ? Buffer.concat([pending, chunk]) : Buffer.from(chunk);
      const messages: Message[] = [];
      while (pending.length >= PRELUDE) {
        const length = pending.readUInt32BE(0);
        if (length < MIN_FRAME || length > MAX_FRAME)
          throw new ApiError('upstream_error', 'the upstream sent a malformed event stream frame');
        if (pending.length < length) break;
        try {
          messages.push(decoder.decode(pending.subarray(0, length)));
        } catch {
          throw new ApiError('upstream_error', 'the upstream sent a corrupt event stream frame');
        }
        pending = pending.subarray(length);
      }
      return messages;
    },
    /** True when bytes of an unfinished frame are left. */
    get partial() {
      return pending.length > 0;
    },
  };
}

/** The body's frames, one at a time as they arrive; a body cut mid-frame is a 502, one gone silent a 504. */
export async function* readEventStream(
  response: UpstreamResponse,
  signal: AbortSignal,
): AsyncGenerator<StreamFrame> {
  const frames = await frameSplitter();
  try {
    for await (const chunk of response.body) {
      for (const message of frames.push(chunk)) yield frameOf(message);
    }
  } catch (error) {
    if (signal.aborted || error instanceof ApiError) throw error;
    if (isBodyTimeout(error)) throw new ApiError('upstream_timeout', 'the upstream went silent mid-answer');
    throw new ApiError('upstream_error', 'the upstream connection broke off mid-answer');
  }
  if (frames.partial) throw new ApiError('upstream_error', 'the upstream stream ended mid-frame');
}
