import { ApiError } from '../../shared/errors.ts';
import { readSse } from '../ai/chat/read-sse.ts';
import type { ChatChunk, ChatMessage } from '../ai/chat/wire.ts';
import type { AgentTool } from './plugins/manager.ts';

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
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      let message = text.slice(0, 500);
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not JSON
      }
      throw new ApiError('upstream_error', `the gateway answered ${response.status}: ${message}`);
    }
    for await (const event of readSse(response.body as AsyncIterable<Buffer>)) {
      if (event.data === '[DONE]') return;
      const parsed = JSON.parse(event.data) as ChatChunk & { error?: { message?: string } };
      if (parsed.error) throw new ApiError('upstream_error', parsed.error.message ?? 'the model failed');
      yield parsed;
    }
  }
}
