import { describe, expect, it } from 'vitest';
import type { ChatChunk, ChatCompletion } from '../chat/wire.ts';
import { CacheTicket } from './ticket.ts';

const completion = (finish: string) =>
  ({
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [],
    finish,
  }) as unknown as ChatCompletion;
const chunk = (content: string, usage?: ChatChunk['usage']): ChatChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
  ...(usage ? { usage } : {}),
});

async function collect(chunks: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
  const out = [];
  for await (const c of chunks) out.push(c);
  return out;
}

describe('a cache ticket', () => {
  it('on a miss, stores the answer once its generation is recorded', async () => {
    const saved: unknown[] = [];
    const ticket = new CacheTicket('miss', undefined, async (answer) => void saved.push(answer));
    const answer = await ticket.completion(async () => completion('stop'));
    await ticket.store({ outputCap: undefined }, 'stop');
    expect(saved).toEqual([answer]);
  });

  it('does not store an answer cut short by a cap its budget lowered', async () => {
    const saved: unknown[] = [];
    const ticket = new CacheTicket('miss', undefined, async (answer) => void saved.push(answer));
    await ticket.completion(async () => completion('length'));
    await ticket.store({ outputCap: 12 }, 'length');
    expect(saved).toEqual([]);
    // A cap the answer did not reach changed nothing of it.
    const whole = new CacheTicket('miss', undefined, async (answer) => void saved.push(answer));
    await whole.completion(async () => completion('stop'));
    await whole.store({ outputCap: 12 }, 'stop');
    expect(saved).toHaveLength(1);
  });

  it('records a stream that ends whole, not one broken off', async () => {
    const saved: unknown[] = [];
    const chunks = [
      chunk('a'),
      chunk('b'),
      chunk('', { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }),
    ];
    const whole = new CacheTicket('miss', undefined, async (answer) => void saved.push(answer));
    expect(
      await collect(
        await whole.chunks(async () =>
          (async function* () {
            yield* chunks;
          })(),
        ),
      ),
    ).toEqual(chunks);
    await whole.store({ outputCap: undefined }, 'stop');
    expect(saved).toEqual([chunks]);

    const broken = new CacheTicket('miss', undefined, async (answer) => void saved.push(answer));
    const relayed = await broken.chunks(async () =>
      (async function* () {
        yield chunks[0]!;
        throw new Error('socket hang up');
      })(),
    );
    await expect(collect(relayed)).rejects.toThrow('socket hang up');
    await broken.store({ outputCap: undefined }, null);
    expect(saved).toHaveLength(1);
  });

  it('on a hit, replays without calling, marking the usage as cached', async () => {
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    const hit = new CacheTicket('hit', [chunk('a'), chunk('', usage)]);
    const replayed = await collect(await hit.chunks(() => expect.unreachable()));
    expect(replayed).toEqual([chunk('a'), chunk('', { ...usage, cached: true })]);
    expect(hit.cached).toBe(true);
    expect(hit.mark({ input_tokens: 1 })).toEqual({ input_tokens: 1, cached: true });
    expect(hit.mark(undefined)).toBeUndefined();
    expect(new CacheTicket('bypass').mark({ input_tokens: 1 })).toEqual({ input_tokens: 1 });
  });
});
