import { describe, expect, it } from 'vitest';
import { pcm16Wav, readWav, resample, toneWav, WavUnreadable, wavComment } from './wav.ts';

/** A WAV with a format chunk of these fields and `data` as its data chunk. */
function wav(fields: { tag: number; channels: number; rate: number; bits: number }, data: Buffer): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(fields.tag, 8);
  fmt.writeUInt16LE(fields.channels, 10);
  fmt.writeUInt32LE(fields.rate, 12);
  fmt.writeUInt32LE((fields.rate * fields.channels * fields.bits) / 8, 16);
  fmt.writeUInt16LE((fields.channels * fields.bits) / 8, 20);
  fmt.writeUInt16LE(fields.bits, 22);
  const header = Buffer.alloc(8);
  header.write('data', 0, 'ascii');
  header.writeUInt32LE(data.length, 4);
  const riff = Buffer.from('RIFF\0\0\0\0WAVE', 'ascii');
  riff.writeUInt32LE(4 + fmt.length + 8 + data.length, 4);
  return Buffer.concat([riff, fmt, header, data]);
}

describe('WAV', () => {
  it('reads back what it writes, 16-bit mono', () => {
    const samples = Float32Array.from([0, 0.5, -0.5, 1, -1]);
    const read = readWav(pcm16Wav(samples, 22_050));
    expect(read.sampleRate).toBe(22_050);
    for (const [i, s] of read.samples.entries()) expect(s).toBeCloseTo(samples[i]!, 3);
  });

  it('mixes channels into one, and reads 8-bit, 24-bit and float samples', () => {
    const stereo = Buffer.alloc(8);
    stereo.writeInt16LE(16_384, 0);
    stereo.writeInt16LE(0, 2);
    stereo.writeInt16LE(-32_768, 4);
    stereo.writeInt16LE(-32_768, 6);
    expect(Array.from(readWav(wav({ tag: 1, channels: 2, rate: 8000, bits: 16 }, stereo)).samples)).toEqual([
      0.25, -1,
    ]);
    expect(
      Array.from(readWav(wav({ tag: 1, channels: 1, rate: 8000, bits: 8 }, Buffer.from([128, 0]))).samples),
    ).toEqual([0, -1]);
    const s24 = Buffer.alloc(3);
    s24.writeIntLE(-4_194_304, 0, 3);
    expect(Array.from(readWav(wav({ tag: 1, channels: 1, rate: 8000, bits: 24 }, s24)).samples)).toEqual([
      -0.5,
    ]);
    const f32 = Buffer.alloc(4);
    f32.writeFloatLE(0.75);
    expect(Array.from(readWav(wav({ tag: 3, channels: 1, rate: 8000, bits: 32 }, f32)).samples)).toEqual([
      0.75,
    ]);
  });

  it('names what it cannot read', () => {
    expect(() => readWav(Buffer.from('ID3\u0004 an mp3'))).toThrow(new WavUnreadable('not a RIFF/WAVE file'));
    expect(() => readWav(wav({ tag: 2, channels: 1, rate: 8000, bits: 4 }, Buffer.alloc(4)))).toThrow(
      /format 2 with 4-bit samples is not PCM or float/,
    );
    expect(() => readWav(Buffer.from('RIFF\0\0\0\0WAVE', 'ascii'))).toThrow(/no format chunk/);
  });

  it('resamples by linear interpolation', () => {
    const ramp = Float32Array.from({ length: 12 }, (_, i) => i / 12);
    const down = resample(ramp, 12, 8);
    expect(down).toHaveLength(8);
    for (const [i, s] of down.entries()) expect(s).toBeCloseTo((i * 1.5) / 12, 6);
    expect(resample(ramp, 16_000, 16_000)).toBe(ramp);
  });

  it('a dev tone carries its comment', () => {
    const tone = toneWav(440, 100, 'hello studio');
    expect(wavComment(tone)).toBe('hello studio');
    expect(readWav(tone).samples).toHaveLength(1600);
    expect(wavComment(pcm16Wav(new Float32Array(4), 16_000))).toBeUndefined();
  });
});
