import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from '../../support/gateway.ts';

/** The gateway's base URL for Anthropic's clients: what `ANTHROPIC_BASE_URL` is set to. */
export const anthropicBase = (gw: TestGateway) => `${gw.url}/v1/ai/anthropic`;

/** The official client pointed at the gateway, with no retries (a refusal must show at once). */
export function anthropicClient(
  gw: TestGateway,
  credential: { apiKey: string } | { authToken: string } | { xApiKey: string },
): Anthropic {
  const base = { baseURL: anthropicBase(gw), maxRetries: 0 };
  if ('xApiKey' in credential)
    // The SDK sends an API key as a bearer token; a client may still send it as Anthropic's own header.
    return new Anthropic({ ...base, apiKey: null, defaultHeaders: { 'x-api-key': credential.xApiKey } });
  return new Anthropic({ ...base, ...credential });
}

/** The usage events of a studio, oldest first. */
export async function usageEvents(gw: TestGateway, studioId: string): Promise<Record<string, unknown>[]> {
  const events = await gw.running.ctx.events.readStream(`usage-${studioId}`);
  return events
    .filter((e) => e.type === 'GenerationCompleted' || e.type === 'GenerationFailed')
    .map((e) => ({ type: e.type, ...(e.data as Record<string, unknown>) }));
}

export const weatherTool = {
  name: 'weather',
  description: 'Weather of a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};
