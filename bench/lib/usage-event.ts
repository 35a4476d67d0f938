import { randomUUID } from 'node:crypto';

/** A usage event of the size a chat completion records. */
export const usageEvent = () => ({
  id: randomUUID(),
  type: 'GenerationCompleted',
  data: {
    studioId: 'bench',
    tokenId: 'tok_bench',
    requestId: randomUUID(),
    model: 'compat/bench',
    modality: 'chat',
    inputTokens: 12,
    outputTokens: 9,
    costMicroUsd: 31,
    latencyMs: 2,
    status: 200,
    startedAt: new Date().toISOString(),
  },
});
