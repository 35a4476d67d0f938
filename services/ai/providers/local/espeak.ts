import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../../../../shared/errors.ts';
import { inPrivateTempDir, type RunOptions, runProgram } from './run-program.ts';

/**
 * The voice when none is asked: espeak-ng's US English with its Klatt formant variant, which
 * pocketsphinx understood best of the voices tried (local/asr can read local/tts back).
 */
export const DEFAULT_VOICE = 'en-us+klatt';
/** An espeak-ng voice: a language (`en`, `en-us`, `pt-br`), optionally `+variant` (`+f3`, `+klatt`). */
const VOICE = /^[a-z]{2,3}(?:-[a-z0-9]{1,8}){0,2}(?:\+[a-z0-9_-]{1,24})?$/i;

/** Speaks `text` with espeak-ng: a 16-bit mono WAV at 22,050 Hz, as espeak-ng writes it. */
export async function speak(
  espeak: string,
  text: string,
  voice: string | undefined,
  run: Omit<RunOptions, 'cwd'>,
): Promise<Buffer> {
  const chosen = voice ?? DEFAULT_VOICE;
  if (!VOICE.test(chosen)) throw unknownVoice(chosen);
  return inPrivateTempDir(async (dir) => {
    // The text goes in a file, never on the command line: it cannot be read as an option.
    await writeFile(join(dir, 'text.txt'), text, { mode: 0o600 });
    try {
      await runProgram(espeak, ['-b', '1', '-v', chosen, '-w', 'speech.wav', '-f', 'text.txt'], {
        ...run,
        cwd: dir,
      });
    } catch (error) {
      if (error instanceof ApiError && /voice does not exist/i.test(error.message))
        throw unknownVoice(chosen);
      throw error;
    }
    return readFile(join(dir, 'speech.wav'));
  });
}

const unknownVoice = (voice: string) =>
  new ApiError(
    'validation_failed',
    `local/tts has no voice "${voice.slice(0, 40)}": an espeak-ng voice such as en-us, en-gb+f3 or ${DEFAULT_VOICE}`,
    { param: 'voice' },
  );
