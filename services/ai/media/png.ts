import { crc32, deflateSync } from 'node:zlib';

type Rgb = readonly [number, number, number];

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function header(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // colour type: RGB
  return chunk('IHDR', ihdr);
}

/** Raw scanlines of a diagonal two-colour gradient, deflated. */
function pixels(width: number, height: number, from: Rgb, to: Rgb): Buffer {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) {
      const t = (x + y) / (width + height - 2 || 1);
      for (let c = 0; c < 3; c++) raw[row + 1 + x * 3 + c] = Math.round(from[c]! + (to[c]! - from[c]!) * t);
    }
  }
  return deflateSync(raw);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A small gradient PNG. */
export function gradientPng(width: number, height: number, from: Rgb, to: Rgb): Buffer {
  return Buffer.concat([
    SIGNATURE,
    header(width, height),
    chunk('IDAT', pixels(width, height, from, to)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** An animated PNG: one gradient frame per colour pair, `delayMs` each, looping. */
export function animatedPng(
  width: number,
  height: number,
  frames: readonly [Rgb, Rgb][],
  delayMs: number,
): Buffer {
  const actl = Buffer.alloc(8);
  actl.writeUInt32BE(frames.length, 0);
  const parts = [SIGNATURE, header(width, height), chunk('acTL', actl)];
  let sequence = 0;
  frames.forEach(([from, to], index) => {
    const fctl = Buffer.alloc(26);
    fctl.writeUInt32BE(sequence++, 0);
    fctl.writeUInt32BE(width, 4);
    fctl.writeUInt32BE(height, 8);
    fctl.writeUInt16BE(delayMs, 20);
    fctl.writeUInt16BE(1000, 22);
    parts.push(chunk('fcTL', fctl));
    const data = pixels(width, height, from, to);
    if (index === 0) {
      parts.push(chunk('IDAT', data));
    } else {
      const seq = Buffer.alloc(4);
      seq.writeUInt32BE(sequence++);
      parts.push(chunk('fdAT', Buffer.concat([seq, data])));
    }
  });
  parts.push(chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}
