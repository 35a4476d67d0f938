import { ApiError, messageOf } from '../../shared/errors.ts';
import { type UpstreamClient, upstreamMessage } from '../ai/upstream.ts';
import type { AttemptOutcome } from './deliveries.ts';
import { signatureOf } from './signature.ts';

/** What a receiver is sent: one alert event. */
export interface AlertPayload {
  id: string;
  type: string;
  created_at: string;
  data: unknown;
}

export interface Delivery {
  url: string;
  secret: string;
  /** Whose alert it is (connections are shared fairly between studios). */
  studioId: string;
  payload: AlertPayload;
  signal: AbortSignal;
}

/**
 * POSTs one alert, signed, once (retries are the dispatcher's, each one recorded). Through the
 * gateway's `UpstreamClient`, so a webhook is held to what any upstream is: link-local and cloud
 * metadata addresses refused unless the gateway allows private upstreams, timeouts, pooled
 * connections, the secret scrubbed from any message.
 */
export async function sendAlert(
  client: UpstreamClient,
  delivery: Delivery,
  now: () => number = Date.now,
): Promise<{ outcome: AttemptOutcome; latencyMs: number }> {
  const body = JSON.stringify(delivery.payload);
  const timestamp = Math.floor(now() / 1000);
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const response = await client.send({
      url: delivery.url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'studio-alerts',
        'x-studio-event-id': delivery.payload.id,
        'x-studio-timestamp': String(timestamp),
        'x-studio-signature': signatureOf(delivery.secret, timestamp, body),
      },
      body,
      signal: delivery.signal,
      secrets: [delivery.secret],
      tenant: delivery.studioId,
      baseUrlVariable: 'the webhook url',
      retries: 0,
    });
    await drain(response.body);
    return { outcome: { status: response.status }, latencyMs: latency() };
  } catch (error) {
    const status = error instanceof ApiError ? upstreamStatusOf(error) : undefined;
    if (status !== undefined) return { outcome: { status }, latencyMs: latency() };
    const message = upstreamMessage(messageOf(error), [delivery.secret]);
    return { outcome: { error: message }, latencyMs: latency() };
  }
}

/** Reads what a receiver answers, up to 64 KiB (nobody reads it): leaving the loop drops the rest. */
async function drain(body: AsyncIterable<Buffer>): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size >= 64 * 1024) break;
    }
  } catch {
    // the status is what counts
  }
}

/** The receiver's own status, when it answered one (a non-2xx). */
function upstreamStatusOf(error: ApiError): number | undefined {
  const details = error.options.details as { upstream_status?: unknown } | undefined;
  return typeof details?.upstream_status === 'number' ? details.upstream_status : undefined;
}
