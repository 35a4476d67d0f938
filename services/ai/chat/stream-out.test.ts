import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { FrameWriter } from './stream-out.ts';

/** A response that records its writes and answers `write` as a socket with `room` writes of room would. */
class FakeResponse extends EventEmitter {
  writes: string[] = [];
  destroyed = false;
  room = Number.POSITIVE_INFINITY;
  write(text: string): boolean {
    this.writes.push(text);
    return this.writes.length < this.room;
  }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FrameWriter', () => {
  it('sends the frames made in one turn of the event loop in one write, in order', async () => {
    const res = new FakeResponse();
    const out = new FrameWriter(res as unknown as ServerResponse);
    out.write(['a\n\n']);
    await Promise.resolve(); // frames relayed one microtask apart, as the relay's loop makes them
    out.write(['b\n\n', 'c\n\n']);
    expect(res.writes).toEqual([]);
    await turn();
    expect(res.writes).toEqual(['a\n\nb\n\nc\n\n']);
    out.write(['d\n\n']);
    await turn();
    expect(res.writes).toEqual(['a\n\nb\n\nc\n\n', 'd\n\n']);
  });

  it('writes what is pending at once when flushed, before what the caller writes next', async () => {
    const res = new FakeResponse();
    const out = new FrameWriter(res as unknown as ServerResponse);
    out.write(['a\n\n', 'b\n\n']);
    out.flush();
    res.write('data: [DONE]\n\n');
    await turn();
    expect(res.writes).toEqual(['a\n\nb\n\n', 'data: [DONE]\n\n']);
  });

  it('writes at once past 64 KiB pending: chunks that are all there never end a turn', () => {
    const res = new FakeResponse();
    const out = new FrameWriter(res as unknown as ServerResponse);
    const frame = `data: ${'x'.repeat(16 * 1024)}\n\n`;
    for (let i = 0; i < 3; i++) out.write([frame]);
    expect(res.writes).toEqual([]);
    out.write([frame]);
    expect(res.writes).toEqual([frame.repeat(4)]);
  });

  it('waits for the answer to drain once a write found it full, and goes on after', async () => {
    const res = new FakeResponse();
    res.room = 1;
    const out = new FrameWriter(res as unknown as ServerResponse);
    expect(out.write(['a\n\n'])).toBeUndefined();
    await turn();
    let drained = false;
    const waiting = out.write(['b\n\n']);
    expect(waiting).toBeInstanceOf(Promise);
    void waiting?.then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    res.room = Number.POSITIVE_INFINITY;
    res.emit('drain');
    await waiting;
    expect(drained).toBe(true);
    expect(out.write(['c\n\n'])).toBeUndefined();
    await turn();
    expect(res.writes).toEqual(['a\n\n', 'b\n\n', 'c\n\n']);
  });

  it('stops waiting when the client goes away', async () => {
    const res = new FakeResponse();
    res.room = 1;
    const out = new FrameWriter(res as unknown as ServerResponse);
    out.write(['a\n\n']);
    await turn();
    const waiting = out.write(['b\n\n']);
    res.destroyed = true;
    res.emit('close');
    await expect(waiting).resolves.toBeUndefined();
    expect(res.listenerCount('drain') + res.listenerCount('close')).toBe(0);
  });
});
