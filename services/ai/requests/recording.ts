import type { AnyAction } from '../../../shared/http/action.ts';
import { toApiError } from '../../../shared/http/errors.ts';
import { secondsSinceArrival } from '../../../shared/observability/http.ts';
import type { PayloadCapture } from '../payloads/payload-capture.ts';
import type { Modality } from '../providers/types.ts';
import { formatOf } from './format.ts';
import type { RefusalLog } from './refusal-log.ts';

/** Responses whose generation was admitted: its own event (`GenerationFailed`) records how it ended. */
const admitted = new WeakSet<object>();

/** The generation of the request answered by `res` was admitted: it is on record whatever happens next. */
export const noteAdmitted = (res: object) => admitted.add(res);

/** What each generation route generates, for the refusals of requests that never got to say. */
export const GENERATION_ROUTES: Readonly<Record<string, Modality>> = {
  text: 'text',
  stream: 'stream',
  'chat/completions': 'chat',
  completions: 'text',
  responses: 'chat',
  'anthropic/v1/messages': 'chat',
  embeddings: 'embed',
  image: 'image',
  'images/generations': 'image',
  tts: 'tts',
  'audio/speech': 'tts',
  asr: 'asr',
  'audio/transcriptions': 'asr',
  video: 'video',
};

/**
 * The generation routes among `actions`, each made to capture its bodies where the studio captures
 * them, and to put on record a refusal of a user's request that was never admitted (bad body, model
 * not found or not allowed, rate limit, budget). Requests without a known token are counted in
 * metrics only; a client that went away refused nothing.
 */
export function recordingRequests(
  actions: readonly AnyAction[],
  { refusals, capture }: { refusals: RefusalLog; capture: PayloadCapture },
): AnyAction[] {
  return actions.map((action) => {
    const modality = GENERATION_ROUTES[action.action];
    if (modality === undefined || action.method !== 'POST') return action;
    return {
      ...action,
      handler(input, ctx) {
        capture.begin(ctx);
        return action.handler(input, ctx);
      },
      failed(error, req, res) {
        const identity = req.identity;
        if (identity.kind !== 'user' || admitted.has(res) || res.destroyed) return;
        const api = toApiError(error);
        const body = req.body as { model?: unknown } | undefined;
        refusals.refused({
          studioId: identity.studioId,
          tokenId: identity.tokenId,
          requestId: req.requestId,
          format: formatOf(req),
          model: typeof body?.model === 'string' ? body.model.slice(0, 200) : null,
          modality,
          status: api?.status ?? 500,
          errorCode: api?.code ?? 'internal_error',
          errorMessage: capture.keepsMessages(identity.studioId)
            ? (api?.message ?? 'internal error').slice(0, 500)
            : '',
          latencyMs: Math.round(secondsSinceArrival(res) * 1000),
        });
      },
    };
  });
}
