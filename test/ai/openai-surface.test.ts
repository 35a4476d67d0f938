import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioWithToken } from '../support/admin.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

// The rest of OpenAI's and Anthropic's surface a gateway can serve, through their official clients
// unchanged: images, speech, one model, the legacy completions, Anthropic's model list; and a model
// that cannot be called says what to set.

let gw: TestGateway;
let token: string;
const openai = () => new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: token, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: `${gw.url}/v1/ai/anthropic`, apiKey: token, maxRetries: 0 });

beforeAll(async () => {
  gw = await startTestGateway({ store: 'memory', logLevel: 'silent' });
  ({ token } = await studioWithToken(gw, 'acme'));
});
afterAll(() => gw?.close());

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe("OpenAI's client", () => {
  it('images.generate answers PNGs as base64, one per image asked', async () => {
    const images = await openai().images.generate({ model: 'dev/image', prompt: 'a red square', n: 2 });
    expect(images.data).toHaveLength(2);
    for (const image of images.data ?? [])
      expect(Buffer.from(image.b64_json!, 'base64').subarray(0, 4)).toEqual(PNG);
    expect(typeof images.created).toBe('number');
  });

  it('images.generate asking for a hosted URL is told to take b64_json', async () => {
    const refused = await openai()
      .images.generate({ model: 'dev/image', prompt: 'x', response_format: 'url' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('b64_json');
  });

  it('audio.speech.create answers the audio itself; audio.transcriptions.create (a multipart upload) reads it back', async () => {
    const speech = await openai().audio.speech.create({
      model: 'dev/tts',
      voice: 'alloy',
      input: 'hello from the gateway',
      response_format: 'wav',
    });
    expect(speech.headers.get('content-type')).toBe('audio/wav');
    const audio = Buffer.from(await speech.arrayBuffer());
    expect(audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
    const file = await toFile(audio, 'speech.wav', { type: 'audio/wav' });
    const heard = await openai().audio.transcriptions.create({ model: 'dev/asr', file });
    expect(heard.text).toBe('hello from the gateway');
    const plain = await openai().audio.transcriptions.create({
      model: 'dev/asr',
      file: await toFile(audio, 'speech.wav'),
      response_format: 'text',
    });
    expect(String(plain).trim()).toBe('hello from the gateway');
  });

  it('a transcription sent as JSON is told to send a form', async () => {
    const res = await gw.api('POST', '/v1/ai/audio/transcriptions', { token, body: { model: 'dev/asr' } });
    expect(res.status).toBe(415);
    expect(res.json.error.message).toContain('multipart/form-data');
  });

  it('models.retrieve answers one model, slash and all; one the token cannot see is a 404', async () => {
    expect(await openai().models.retrieve('dev/echo')).toMatchObject({
      id: 'dev/echo',
      object: 'model',
      owned_by: 'dev',
    });
    await expect(openai().models.retrieve('dev/nothing')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const limited = await studioWithToken(gw, 'limited', { models: ['dev/echo'] });
    const client = new OpenAI({ baseURL: `${gw.url}/v1/ai`, apiKey: limited.token, maxRetries: 0 });
    await expect(client.models.retrieve('dev/image')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('completions.create answers the legacy shape, streamed or not', async () => {
    const completion = await openai().completions.create({ model: 'dev/echo', prompt: 'hello there' });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0]).toMatchObject({
      text: 'Echo: hello there',
      index: 0,
      finish_reason: 'stop',
    });
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);

    const stream = await openai().completions.create({
      model: 'dev/echo',
      prompt: 'streamed words',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Echo: streamed words');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('completions.create with what chat cannot say is a 400 naming it', async () => {
    const refused = await openai()
      .completions.create({ model: 'dev/echo', prompt: 'x', echo: true })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as Error).message).toContain('echo');
  });

  it('a model that cannot be called names the key to set', async () => {
    const refused = await openai()
      .chat.completions.create({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as Error).message).toContain('set ANTHROPIC_API_KEY');
  });
});

describe("Anthropic's client", () => {
  it('models.list answers the models the token may call, in its shape', async () => {
    const ids: string[] = [];
    for await (const model of anthropic().models.list()) {
      expect(model.type).toBe('model');
      ids.push(model.id);
    }
    expect(ids).toContain('dev/echo');
  });
});
