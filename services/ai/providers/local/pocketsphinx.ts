import { existsSync, realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pcm16Wav, resample } from '../../media/wav.ts';
import { inPrivateTempDir, type RunOptions, runProgram } from './run-program.ts';

/** The sample rate of pocketsphinx's US English acoustic model. */
const MODEL_SAMPLE_RATE = 16_000;

/** The US English model's files (Debian's `pocketsphinx-en-us`). */
export interface SphinxModel {
  hmm: string;
  lm: string;
  dict: string;
}

/**
 * The model installed beside the program (`<prefix>/bin/…` → `<prefix>/share/pocketsphinx/model/en-us`),
 * the program's links followed first (`/bin` is a link to `/usr/bin` on merged-/usr systems).
 */
export function sphinxModelBeside(program: string): SphinxModel | undefined {
  const dir = join(dirname(dirname(realpathSync(program))), 'share', 'pocketsphinx', 'model', 'en-us');
  const model = {
    hmm: join(dir, 'en-us'),
    lm: join(dir, 'en-us.lm.bin'),
    dict: join(dir, 'cmudict-en-us.dict'),
  };
  return Object.values(model).every((path) => existsSync(path)) ? model : undefined;
}

/** Recognizes English speech in mono samples with pocketsphinx: one line per utterance, joined. */
export async function recognize(
  program: string,
  model: SphinxModel,
  speech: { sampleRate: number; samples: Float32Array },
  run: Omit<RunOptions, 'cwd'>,
): Promise<string> {
  const wav = pcm16Wav(resample(speech.samples, speech.sampleRate, MODEL_SAMPLE_RATE), MODEL_SAMPLE_RATE);
  return inPrivateTempDir(async (dir) => {
    await writeFile(join(dir, 'speech.wav'), wav, { mode: 0o600 });
    const stdout = await runProgram(
      program,
      // Its log (several KiB to stderr) goes nowhere: only the hypotheses come out, on stdout.
      [
        '-infile',
        'speech.wav',
        '-hmm',
        model.hmm,
        '-lm',
        model.lm,
        '-dict',
        model.dict,
        '-logfn',
        '/dev/null',
      ],
      { ...run, cwd: dir },
    );
    return stdout
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ');
  });
}
