import { availableParallelism } from 'node:os';
import { BoundedSemaphore, SemaphoreFull } from '../../../../shared/bounded-semaphore.ts';
import { ApiError } from '../../../../shared/errors.ts';
import { findExecutable } from '../../../../shared/executables.ts';
import { readWav, WavUnreadable } from '../../media/wav.ts';
import type { ModelDefinition, Provider } from '../types.ts';
import { speak } from './espeak.ts';
import { recognize, sphinxModelBeside } from './pocketsphinx.ts';
import type { RunOptions } from './run-program.ts';

export interface LocalProviderOptions {
  /** Where the programs are looked for (default: this process's PATH), once, when the provider is made. */
  path?: string;
  ttsTimeoutMs?: number;
  asrTimeoutMs?: number;
}

const ESPEAK = 'espeak-ng';
const POCKETSPHINX = 'pocketsphinx_continuous';
/** Named when the program is there but its US English model is not. */
const SPHINX_MODEL_PACKAGE = 'pocketsphinx-en-us';
const WAV_TYPES = new Set(['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave']);
/** A transcript is text, a few KiB for minutes of speech; nothing else is written on stdout. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

const model = (id: string, name: string, description: string, modality: 'tts' | 'asr'): ModelDefinition => ({
  id: `local/${id}`,
  name,
  description,
  modalities: [modality],
  tags: ['local'],
  meta: { offline: true },
  upstreamModel: id,
});
const TTS = model(
  'tts',
  'Local speech (espeak-ng)',
  'Speech synthesized on this machine by espeak-ng: a WAV.',
  'tts',
);
const ASR = model(
  'asr',
  'Local transcription (pocketsphinx)',
  'English speech recognized on this machine by pocketsphinx, from WAV audio.',
  'asr',
);

/**
 * Speech on this machine, offline and free: `local/tts` runs espeak-ng, `local/asr` pocketsphinx
 * with its US English model (Debian: `espeak-ng`, `pocketsphinx`, `pocketsphinx-en-us`). A model
 * whose program is not installed is listed to admins as unavailable, the program named.
 */
export function localProvider(options: LocalProviderOptions = {}): Provider {
  const path = options.path ?? process.env.PATH ?? '';
  const espeak = findExecutable(ESPEAK, path);
  const pocketsphinx = findExecutable(POCKETSPHINX, path);
  const sphinxModel = pocketsphinx ? sphinxModelBeside(pocketsphinx) : undefined;
  const missing = new Map<string, readonly string[]>([
    [TTS.id, espeak ? [] : [ESPEAK]],
    [ASR.id, !pocketsphinx ? [POCKETSPHINX] : sphinxModel ? [] : [SPHINX_MODEL_PACKAGE]],
  ]);
  // One program per core at a time; a few more wait, the rest are told to come back.
  const slots = new BoundedSemaphore(availableParallelism(), 4 * availableParallelism());
  const running = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await slots.run(work);
    } catch (error) {
      if (!(error instanceof SemaphoreFull)) throw error;
      throw new ApiError('overloaded', 'every local speech program is busy', {
        headers: { 'Retry-After': '1' },
      });
    }
  };
  const runOptions = (signal: AbortSignal, timeoutMs: number): Omit<RunOptions, 'cwd'> => ({
    timeoutMs,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    signal,
    env: { PATH: path },
  });

  return {
    id: 'local',
    name: 'Local (this machine)',
    env: [],
    models: () => [TTS, ASR],
    missingPrograms: (m) => missing.get(m.id) ?? [],

    async tts(_m, request, ctx) {
      const audio = await running(() =>
        speak(espeak!, request.input, request.voice, runOptions(ctx.signal, options.ttsTimeoutMs ?? 30_000)),
      );
      return { audio, mime_type: 'audio/wav' };
    },

    async asr(_m, request, ctx) {
      if (request.language && !/^en(-us)?$/i.test(request.language)) {
        throw new ApiError('validation_failed', 'local/asr recognizes English (en) only', {
          param: 'language',
        });
      }
      if (!WAV_TYPES.has(request.mime_type.toLowerCase())) {
        throw new ApiError(
          'unsupported_media_type',
          `local/asr reads WAV audio (audio/wav), not ${request.mime_type}`,
          { param: 'mime_type' },
        );
      }
      let speech: ReturnType<typeof readWav>;
      try {
        speech = readWav(request.audio);
      } catch (error) {
        if (!(error instanceof WavUnreadable)) throw error;
        throw new ApiError('validation_failed', `audio is not a WAV file local/asr reads: ${error.message}`, {
          param: 'audio',
        });
      }
      const text = await running(() =>
        recognize(
          pocketsphinx!,
          sphinxModel!,
          speech,
          runOptions(ctx.signal, options.asrTimeoutMs ?? 120_000),
        ),
      );
      return { text, language: 'en' };
    },
  };
}
