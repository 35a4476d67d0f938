import { randomBytes } from 'node:crypto';
import { builtinAiProviders } from '../../services/ai/providers/index.ts';
import { UpstreamClient } from '../../services/ai/upstream.ts';
import {
  type ApiResponse,
  startTestGateway,
  type TestGateway,
  type TestStoreKind,
} from '../support/gateway.ts';

/** A gateway whose `compat/m` model is served by `upstreamUrl` (an OpenAI-compatible mock). */
export async function governedGateway(options: {
  store: TestStoreKind;
  upstreamUrl: string;
  databaseUrl?: string;
  masterKey?: string;
}): Promise<TestGateway> {
  return startTestGateway({
    store: options.store,
    logLevel: 'silent',
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.masterKey ? { masterKey: options.masterKey } : {}),
    processEnv: { OPENAI_COMPATIBLE_BASE_URL: `${options.upstreamUrl}/v1`, OPENAI_COMPATIBLE_MODELS: 'm' },
    ai: {
      upstream: new UpstreamClient({ timeoutMs: 10_000, idleTimeoutMs: 10_000, retries: 0, retryBaseMs: 1 }),
      providers: builtinAiProviders,
    },
  });
}

export const sharedMasterKey = () => randomBytes(32).toString('hex');

/** Throws unless the answer is a success: set-up steps must not fail quietly. */
export function ok(res: ApiResponse): ApiResponse {
  if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
  return res;
}

/** The micro-dollars recorded as spent in a studio's usage stream, read from the log. */
export async function recordedSpend(gw: TestGateway, studioId: string): Promise<number> {
  const events = await gw.running.ctx.events.readStream(`usage-${studioId}`);
  return events
    .filter((e) => e.type === 'GenerationCompleted' || e.type === 'GenerationFailed')
    .reduce((sum, e) => sum + ((e.data as { costMicroUsd?: number }).costMicroUsd ?? 0), 0);
}

/**
 * A studio's usage stream, an entry per event: its type, with ` (reserved)` where a generation's
 * event records the reservation it settles (one never written on its own).
 */
export async function usageLog(gw: TestGateway, studioId: string): Promise<string[]> {
  const events = await gw.running.ctx.events.readStream(`usage-${studioId}`);
  return events.map((e) =>
    (e.data as { reservedMicroUsd?: number }).reservedMicroUsd === undefined
      ? e.type
      : `${e.type} (reserved)`,
  );
}
