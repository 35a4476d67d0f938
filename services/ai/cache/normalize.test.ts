import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../chat/wire.ts';
import { cacheKey, chatCacheRequest, textCacheRequest } from './normalize.ts';

const messages = [{ role: 'user' as const, content: 'hi' }];
const chatKey = (body: Partial<ChatRequest>, studio = 'acme') =>
  cacheKey(studio, chatCacheRequest('openai/gpt-4o-mini', { model: 'gpt-4o-mini', messages, ...body }));

describe('cache keys', () => {
  it('are SHA-256 hex, the same whatever the order of the fields', () => {
    const a = cacheKey('acme', chatCacheRequest('m', { model: 'm', messages, temperature: 0.5, seed: 3 }));
    const b = cacheKey('acme', chatCacheRequest('m', { seed: 3, temperature: 0.5, messages, model: 'm' }));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
  });

  it('differ between studios, for the very same request', () => {
    expect(chatKey({}, 'acme')).not.toBe(chatKey({}, 'globex'));
  });

  it('differ with every field that can change the answer', () => {
    const base = chatKey({});
    for (const change of [
      { temperature: 0 },
      { temperature: 1 },
      { max_tokens: 10 },
      { tools: [{ type: 'function' as const, function: { name: 'f' } }] },
      { n: 2 },
      { response_format: { type: 'json_object' } },
      { messages: [{ role: 'user' as const, content: 'hi ' }] },
      { stream: true },
    ]) {
      expect(chatKey(change), JSON.stringify(change)).not.toBe(base);
    }
    expect(cacheKey('acme', chatCacheRequest('other/model', { model: 'x', messages }))).not.toBe(
      cacheKey('acme', chatCacheRequest('openai/gpt-4o-mini', { model: 'x', messages })),
    );
  });

  it('ignore what does not change the answer: who asks, tags, null fields, the model as spelt', () => {
    const base = chatKey({});
    for (const same of [
      { user: 'end-user-1', metadata: { run: '7' }, store: true, studio_id: 'acme' },
      { safety_identifier: 'x', prompt_cache_key: 'y' },
      { temperature: null, max_tokens: null, stream_options: null },
      { stream: false },
      // Streaming options mean nothing to a JSON answer...
      { stream_options: { include_usage: true } },
    ]) {
      expect(chatKey(same), JSON.stringify(same)).toBe(base);
    }
    // ...and change a stream's frames.
    expect(chatKey({ stream: true, stream_options: { include_usage: true } })).not.toBe(
      chatKey({ stream: true }),
    );
  });

  it('text and stream answers are different entries; an empty system prompt is none', () => {
    const text = textCacheRequest('text', 'm', { prompt: 'hi' });
    expect(cacheKey('acme', text)).not.toBe(
      cacheKey('acme', textCacheRequest('stream', 'm', { prompt: 'hi' })),
    );
    expect(cacheKey('acme', textCacheRequest('text', 'm', { prompt: 'hi', system: '' }))).toBe(
      cacheKey('acme', text),
    );
    expect(cacheKey('acme', textCacheRequest('text', 'm', { prompt: 'hi', temperature: 0.3 }))).not.toBe(
      cacheKey('acme', text),
    );
  });

  it('a field named like a member of the key cannot make two requests collide', () => {
    const shaped = chatCacheRequest('m', { model: 'm', messages, shape: 'text' } as ChatRequest);
    expect(cacheKey('acme', shaped)).not.toBe(
      cacheKey('acme', chatCacheRequest('m', { model: 'm', messages })),
    );
  });
});
