import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localProvider } from '../../../services/ai/providers/local/provider.ts';
import { studioWithToken } from '../../support/admin.ts';
import { expectApiError, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import type { Json } from '../../support/mock-ai-upstreams.ts';
import { notRunHere } from '../../support/not-run-here.ts';

// Offline speech on this machine: local/tts (espeak-ng) speaks a sentence, local/asr (pocketsphinx)
// hears it again. Without the programs these tests are reported as not run, except in CI
// (`CI=true`), which installs them (.ci/run) and where their absence is a failure.

const here = localProvider();
const absent = [
  ...new Set(here.models({ get: () => undefined }).flatMap((m) => here.missingPrograms?.(m) ?? [])),
];
const skip = notRunHere(
  'the local speech round trip',
  absent.length > 0
    ? `not installed: ${absent.join(', ')} (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us)`
    : undefined,
);

const SENTENCE = 'hello world this is a test';

async function gatewayWith(path?: string): Promise<{ gw: TestGateway; token: string }> {
  const gw = await startTestGateway({
    store: 'memory',
    logLevel: 'silent',
    ai: { providers: () => [localProvider(path === undefined ? {} : { path })] },
  });
  return { gw, token: (await studioWithToken(gw, 'l')).token };
}

describe('local speech without its programs', () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    ({ gw, token } = await gatewayWith('/nonexistent-studio-test-path'));
  });
  afterAll(() => gw?.close());

  it('admins see both models unavailable, the missing program named; users do not see them', async () => {
    const items = (await gw.api('GET', '/v1/ai/models', { token: gw.adminKey })).json.items;
    expect(items.find((m: Json) => m.id === 'local/tts')).toMatchObject({
      available: false,
      missing_env: [],
      missing_programs: ['espeak-ng'],
      modalities: ['tts'],
    });
    expect(items.find((m: Json) => m.id === 'local/asr')).toMatchObject({
      available: false,
      missing_programs: ['pocketsphinx_continuous'],
    });
    const user = (await gw.api('GET', '/v1/ai/models', { token })).json.items;
    expect(user.filter((m: Json) => m.id.startsWith('local/'))).toEqual([]);
    const refused = await gw.api('POST', '/v1/ai/tts', { token, body: { model: 'local/tts', input: 'hi' } });
    expectApiError(refused, 404, 'model_not_found');
  });
});

describe.skipIf(skip !== undefined)('local speech round trip', () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    ({ gw, token } = await gatewayWith());
  });
  afterAll(() => gw?.close());
  const post = (path: string, body: unknown) => gw.api('POST', path, { token, body });

  it('local/tts speaks a sentence that local/asr recognizes, most words intact; usage is free', async () => {
    const spoken = await post('/v1/ai/tts', { model: 'local/tts', input: SENTENCE });
    expect(spoken.status, spoken.text).toBe(200);
    expect(spoken.json.mime_type).toBe('audio/wav');
    const audio = Buffer.from(spoken.json.audio, 'base64');
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
    expect(audio.readUInt32LE(24)).toBe(22_050);

    const heard = await post('/v1/ai/asr', {
      model: 'local/asr',
      audio: spoken.json.audio,
      mime_type: 'audio/wav',
    });
    expect(heard.status, heard.text).toBe(200);
    expect(heard.json.language).toBe('en');
    const words = new Set(heard.json.text.toLowerCase().split(/\s+/));
    const back = SENTENCE.split(' ').filter((word) => words.has(word));
    expect(back.length, `heard "${heard.json.text}"`).toBeGreaterThanOrEqual(4);

    const usage = (await gw.api('GET', '/v1/ai/usage?studio_id=l', { token: gw.adminKey })).json;
    expect(usage.items.map((i: Json) => [i.model, i.requests, i.failures])).toEqual(
      expect.arrayContaining([
        ['local/tts', 1, 0],
        ['local/asr', 1, 0],
      ]),
    );
    expect(usage.totals.cost_usd).toBe(0);
  });

  it('an espeak-ng voice can be chosen; one that does not exist is a 400 naming the voice', async () => {
    const gb = await post('/v1/ai/tts', { model: 'local/tts', input: 'good morning', voice: 'en-gb' });
    expect(gb.status, gb.text).toBe(200);
    for (const voice of ['alloy', 'xx-nowhere', '--help']) {
      const error = expectApiError(
        await post('/v1/ai/tts', { model: 'local/tts', input: 'hi', voice }),
        400,
        'validation_failed',
      );
      expect(error.param).toBe('voice');
    }
  });

  it('local/asr reads WAV only: another type is a 415 naming it, bytes that are not WAV a 400', async () => {
    const mp3 = await post('/v1/ai/asr', {
      model: 'local/asr',
      audio: Buffer.from('ID3 not really').toString('base64'),
      mime_type: 'audio/mpeg',
    });
    expect(expectApiError(mp3, 415, 'unsupported_media_type').message).toMatch(/audio\/mpeg/);
    const fake = await post('/v1/ai/asr', {
      model: 'local/asr',
      audio: Buffer.from('definitely not a wav').toString('base64'),
      mime_type: 'audio/wav',
    });
    expect(expectApiError(fake, 400, 'validation_failed').param).toBe('audio');
    const french = await post('/v1/ai/asr', {
      model: 'local/asr',
      audio: Buffer.from('RIFF').toString('base64'),
      mime_type: 'audio/wav',
      language: 'fr',
    });
    expect(expectApiError(french, 400, 'validation_failed').param).toBe('language');
  });
});
