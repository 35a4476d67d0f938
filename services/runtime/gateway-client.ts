import { z } from 'zod';
import { ApiError } from '../../shared/errors.ts';
import { readSse } from '../ai/chat/read-sse.ts';
import type { ChatChunk, ChatMessage } from '../ai/chat/wire.ts';
import type { Price } from '../ai/prices/price.ts';
import type { AgentTool } from './plugins/manager.ts';

/** What `GET /v1/ai/prices` answers (the fields the runtime prices with; `source` and the rest ignored). */
const PriceList = z.object({
  items: z.array(
    z.object({
      model: z.string(),
      input_per_mtok: z.number(),
      output_per_mtok: z.number(),
      per_image: z.number(),
      per_audio_second: z.number(),
      per_video_second: z.number(),
    }),
  ),
});

export interface ChatCall {
  model: string;
  messages: ChatMessage[];
  tools: AgentTool[];
  signal: AbortSignal;
}

/** How the runtime reaches models: the gateway's OpenAI-compatible chat completions, streamed. */
export class GatewayClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async *streamChat(call: ChatCall): AsyncGenerator<ChatChunk> {
    const response = await fetch(`${this.baseUrl}/v1/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: call.model,
        messages: call.messages,
        ...(call.tools.length > 0 ? { tools: call.tools } : {}),
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal: call.signal,
    });
    if (!response.ok || !response.body) throw await refusal(response);
    for await (const event of readSse(response.body as AsyncIterable<Buffer>)) {
      if (event.data === '[DONE]') return;
      const parsed = JSON.parse(event.data) as ChatChunk & { error?: { message?: string } };
      if (parsed.error) throw new ApiError('upstream_error', parsed.error.message ?? 'the model failed');
      yield parsed;
    }
  }

  /** The gateway's prices of the models this token may call, by model id. */
  async prices(signal?: AbortSignal): Promise<ReadonlyMap<string, Price>> {
    const response = await fetch(`${this.baseUrl}/v1/ai/prices`, {
      headers: { authorization: `Bearer ${this.token}` },
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) throw await refusal(response);
    const parsed = PriceList.safeParse(await response.json());
    if (!parsed.success)
      throw new ApiError('upstream_error', 'the gateway answered prices of an unknown shape');
    return new Map(parsed.data.items.map(({ model, ...price }) => [model, price]));
  }
}

async function refusal(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let message = text.slice(0, 500);
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    // not JSON
  }
  return new ApiError('upstream_error', `the gateway answered ${response.status}: ${message}`);
}
