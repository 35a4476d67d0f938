/**
 * 16-bit mono PCM WAV files, with an optional comment in a LIST/INFO chunk. The dev models write
 * the spoken text there so that dev speech recognition can read it back.
 */
const SAMPLE_RATE = 16_000;

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

export function toneWav(frequencyHz: number, durationMs: number, comment?: string): Buffer {
  const samples = Math.round((SAMPLE_RATE * durationMs) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const fade = Math.min(1, i / 400, (samples - i) / 400);
    pcm.writeInt16LE(
      Math.round(Math.sin((2 * Math.PI * frequencyHz * i) / SAMPLE_RATE) * 8000 * fade),
      i * 2,
    );
  }
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(SAMPLE_RATE, 12);
  fmt.writeUInt32LE(SAMPLE_RATE * 2, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const info = comment === undefined ? Buffer.alloc(0) : infoChunk(comment);
  const dataHeader = Buffer.alloc(8);
  dataHeader.write('data', 0, 'ascii');
  dataHeader.writeUInt32LE(pcm.length, 4);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(4 + fmt.length + info.length + dataHeader.length + pcm.length, 4);
  riff.write('WAVE', 8, 'ascii');
  return Buffer.concat([riff, fmt, info, dataHeader, pcm]);
}

/** The comment of a WAV written by `toneWav`, or undefined for any other audio. */
export function wavComment(audio: Buffer): string | undefined {
  if (
    audio.length < 12 ||
    audio.toString('ascii', 0, 4) !== 'RIFF' ||
    audio.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    return undefined;
  }
  let offset = 12;
  while (offset + 8 <= audio.length) {
    const id = audio.toString('ascii', offset, offset + 4);
    const size = audio.readUInt32LE(offset + 4);
    if (id === 'LIST' && audio.toString('ascii', offset + 8, offset + 12) === 'INFO') {
      let inner = offset + 12;
      while (inner + 8 <= offset + 8 + size) {
        const subId = audio.toString('ascii', inner, inner + 4);
        const subSize = audio.readUInt32LE(inner + 4);
        if (subId === 'ICMT')
          return audio.toString('utf8', inner + 8, inner + 8 + subSize).replace(/\0+$/, '');
        inner += 8 + subSize + (subSize % 2);
      }
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}
