import { describe, expect, it } from 'vitest';
import { failWith, useRoutedGateway } from './support.ts';

/** A route is a model id for every wire format that generates text, not only chat completions. */
const r = useRoutedGateway();

describe('routes through the Responses API', () => {
  it('falls back to the next target and names the target that answered', async () => {
    await r.upsert({
      id: 'resp-fallback',
      strategy: 'fallback',
      targets: [{ model: 'compat/a' }, { model: 'compat/b' }],
    });
    r.script('a', failWith(500));
    const response = await r.pg.client().responses.create({ model: 'resp-fallback', input: 'hello route' });
    expect(response.output_text).toBe('Echo: hello route');
    expect(response.model).toBe('compat/b');
    expect(r.calls()).toEqual(['a', 'b']);
  });

  it('streams through a route', async () => {
    await r.upsert({ id: 'resp-stream', strategy: 'fallback', targets: [{ model: 'compat/c' }] });
    const stream = await r.pg
      .client()
      .responses.create({ model: 'resp-stream', input: 'one two', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(text).toBe('Echo: one two');
  });
});
