import type { MessageView } from '../../../projections/sessions.ts';
import type { ChatMessage } from '../../ai/chat/wire.ts';

/** A session's messages as the model reads them: text parts as content, tool parts as calls and results. */
export function toChatMessages(messages: readonly MessageView[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    const text = message.parts
      .filter((p) => p.type === 'text')
      .map((p) => p.text)
      .join('');
    if (message.role === 'user') {
      out.push({ role: 'user', content: text });
      continue;
    }
    const tools = message.parts.filter((p) => p.type === 'tool');
    out.push({
      role: 'assistant',
      content: text || null,
      ...(tools.length > 0
        ? {
            tool_calls: tools.map((t) => ({
              id: t.call_id,
              type: 'function' as const,
              function: { name: t.tool, arguments: JSON.stringify(t.input ?? {}) },
            })),
          }
        : {}),
    });
    for (const t of tools) {
      const content =
        t.state === 'completed' ? stringify(t.output) : `error: ${t.error ?? 'the tool did not finish'}`;
      out.push({ role: 'tool', tool_call_id: t.call_id, content });
    }
  }
  return out;
}

export function stringify(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}
