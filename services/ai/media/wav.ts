/**
 * WAV files: written as 16-bit mono PCM (with an optional comment in a LIST/INFO chunk, where the
 * dev models carry the spoken text so that dev speech recognition can read it back), read as any
 * PCM or float WAV, every channel mixed into one.
 */
const TONE_SAMPLE_RATE = 16_000;

function infoChunk(comment: string): Buffer {
  const text = Buffer.from(`${comment}\0`, 'utf8');
  const padded = text.length % 2 === 0 ? text : Buffer.concat([text, Buffer.alloc(1)]);
  const icmt = Buffer.alloc(8);
  icmt.write('ICMT', 0, 'ascii');
  icmt.writeUInt32LE(text.length, 4);
  const list = Buffer.alloc(12);
  list.write('LIST', 0, 'ascii');
  list.writeUInt32LE(4 + 8 + padded.length, 4);
  list.write('INFO', 8, 'ascii');
  return Buffer.concat([list, icmt, padded]);
}

/** A 16-bit mono PCM WAV file of `samples` (in [-1, 1]), with `extra` chunks before its data. */
export function pcm16Wav(samples: Float32Array, sampleRate: number, extra: Buffer = Buffer.alloc(0)): Buffer {
  const pcm = Buffer.alloc(samples.length * 2);
  for (const [i, sample] of samples.entries()) {
    pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, sample)) * 32_767), i * 2);
  }
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(sampleRate, 12);
  fmt.writeUInt32LE(sampleRate * 2, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const dataHeader = Buffer.alloc(8);
  dataHeader.write('data', 0, 'ascii');
  dataHeader.writeUInt32LE(pcm.length, 4);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(4 + fmt.length + extra.length + dataHeader.length + pcm.length, 4);
  riff.write('WAVE', 8, 'ascii');
  return Buffer.concat([riff, fmt, extra, dataHeader, pcm]);
}

export function toneWav(frequencyHz: number, durationMs: number, comment?: string): Buffer {
  const samples = new Float32Array(Math.round((TONE_SAMPLE_RATE * durationMs) / 1000));
  for (let i = 0; i < samples.length; i++) {
    const fade = Math.min(1, i / 400, (samples.length - i) / 400);
    samples[i] = (Math.sin((2 * Math.PI * frequencyHz * i) / TONE_SAMPLE_RATE) * 8000 * fade) / 32_767;
  }
  return pcm16Wav(samples, TONE_SAMPLE_RATE, comment === undefined ? undefined : infoChunk(comment));
}

const isWav = (audio: Buffer) =>
  audio.length >= 12 && audio.toString('ascii', 0, 4) === 'RIFF' && audio.toString('ascii', 8, 12) === 'WAVE';

/** The chunks of a RIFF body from `start` to `end`, each cut to what the file holds. */
function* chunksOf(audio: Buffer, start: number, end: number): Generator<{ id: string; body: Buffer }> {
  let offset = start;
  while (offset + 8 <= end) {
    const id = audio.toString('ascii', offset, offset + 4);
    const size = audio.readUInt32LE(offset + 4);
    yield { id, body: audio.subarray(offset + 8, Math.min(end, offset + 8 + size)) };
    offset += 8 + size + (size % 2);
  }
}

/** The comment of a WAV written by `toneWav`, or undefined for any other audio. */
export function wavComment(audio: Buffer): string | undefined {
  if (!isWav(audio)) return undefined;
  for (const chunk of chunksOf(audio, 12, audio.length)) {
    if (chunk.id !== 'LIST' || chunk.body.toString('ascii', 0, 4) !== 'INFO') continue;
    for (const sub of chunksOf(chunk.body, 4, chunk.body.length)) {
      if (sub.id === 'ICMT') return sub.body.toString('utf8').replace(/\0+$/, '');
    }
  }
  return undefined;
}

/** Why a file is not a WAV this module reads. */
export class WavUnreadable extends Error {
  override readonly name = 'WavUnreadable';
}

export interface DecodedWav {
  sampleRate: number;
  /** Every channel mixed into one, in [-1, 1]. */
  samples: Float32Array;
}

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;

/** Reads a PCM (8, 16, 24 or 32-bit) or float (32 or 64-bit) WAV, mixing its channels into one. */
export function readWav(audio: Buffer): DecodedWav {
  if (!isWav(audio)) throw new WavUnreadable('not a RIFF/WAVE file');
  let fmt: Buffer | undefined;
  let data: Buffer | undefined;
  for (const chunk of chunksOf(audio, 12, audio.length)) {
    if (chunk.id === 'fmt ') fmt = chunk.body;
    else if (chunk.id === 'data') data = chunk.body;
    if (fmt && data) break;
  }
  if (!fmt || fmt.length < 16) throw new WavUnreadable('no format chunk');
  if (!data) throw new WavUnreadable('no data chunk');
  const tag = fmt.readUInt16LE(0);
  const format = tag === EXTENSIBLE && fmt.length >= 26 ? fmt.readUInt16LE(24) : tag;
  const channels = fmt.readUInt16LE(2);
  const sampleRate = fmt.readUInt32LE(4);
  const bits = fmt.readUInt16LE(14);
  const read = sampleReader(format, bits);
  if (!read) throw new WavUnreadable(`format ${tag} with ${bits}-bit samples is not PCM or float`);
  if (channels < 1 || sampleRate < 1) throw new WavUnreadable('no channels or no sample rate');
  const bytes = bits / 8;
  const frames = Math.floor(data.length / (bytes * channels));
  const samples = new Float32Array(frames);
  for (let frame = 0; frame < frames; frame++) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel++)
      sum += read(data, (frame * channels + channel) * bytes);
    samples[frame] = sum / channels;
  }
  return { sampleRate, samples };
}

function sampleReader(format: number, bits: number): ((data: Buffer, at: number) => number) | undefined {
  if (format === PCM && bits === 8) return (d, at) => (d.readUInt8(at) - 128) / 128;
  if (format === PCM && bits === 16) return (d, at) => d.readInt16LE(at) / 32_768;
  if (format === PCM && bits === 24) return (d, at) => d.readIntLE(at, 3) / 8_388_608;
  if (format === PCM && bits === 32) return (d, at) => d.readInt32LE(at) / 2_147_483_648;
  if (format === FLOAT && bits === 32) return (d, at) => d.readFloatLE(at);
  if (format === FLOAT && bits === 64) return (d, at) => d.readDoubleLE(at);
  return undefined;
}

/**
 * `samples` at `to` samples a second, by linear interpolation. No low-pass filter: for speech
 * going down from 22.05 or 44.1 kHz to 16 kHz, recognition did better this way than with a
 * windowed-sinc filter in our trials.
 */
export function resample(samples: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return samples;
  const out = new Float32Array(Math.floor((samples.length * to) / from));
  const step = from / to;
  for (let i = 0; i < out.length; i++) {
    const x = i * step;
    const j = Math.floor(x);
    const a = samples[j] ?? 0;
    const b = samples[j + 1] ?? a;
    out[i] = a + (b - a) * (x - j);
  }
  return out;
}
