import { completionId, nowSeconds } from '../../../services/ai/chat/ids.ts';
import { textOf } from '../../../services/ai/chat/wire.ts';
import type { Provider } from '../../../services/ai/providers/types.ts';

/**
 * `test/paced`: answers "Echo: <last user words>" word by word, like dev/echo, but stops after the
 * first two words while the test holds it: the page can be seen typing, reloaded or cut off
 * mid-turn, and the rest follows when the test lets go.
 */
export function pacedModel() {
  let gate: Promise<void> = Promise.resolve();
  const provider: Provider = {
    id: 'test',
    name: 'Test',
    env: [],
    models: () => [
      {
        id: 'test/paced',
        name: 'Paced echo',
        description: 'Echoes word by word; holds after two words while a test says so.',
        modalities: ['chat', 'stream'],
        tags: [],
        meta: {},
        upstreamModel: 'paced',
      },
    ],
    async chatStream(model, request) {
      const last = [...request.messages].reverse().find((m) => m.role === 'user');
      // Attachments arrive as tags before the words: echo the words only.
      const words = textOf(last?.content ?? '').replace(/<file [\s\S]*<\/file>\s*/, '');
      const chunks = `Echo: ${words}`.split(/(?<=\s)/);
      const held = gate;
      const base = {
        id: completionId(),
        object: 'chat.completion.chunk' as const,
        created: nowSeconds(),
        model: model.id,
      };
      return (async function* () {
        for (const [index, content] of chunks.entries()) {
          if (index === 2) await held;
          yield { ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] };
        }
        yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' as const }] };
      })();
    },
  };
  return {
    provider,
    /** Holds every answer begun from now on after its second word, until the returned function is called. */
    hold(): () => void {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        release();
        gate = Promise.resolve();
      };
    },
  };
}
