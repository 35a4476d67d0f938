import { EventEmitter } from 'node:events';
import type { PartDelta } from './schemas.ts';

export type { PartDelta } from './schemas.ts';

/** In-process fan-out of live deltas, per session. */
export class LiveBus {
  #emitter = new EventEmitter().setMaxListeners(0);

  publish(delta: PartDelta): void {
    this.#emitter.emit(delta.sessionId, delta);
  }

  subscribe(sessionId: string, listener: (delta: PartDelta) => void): () => void {
    this.#emitter.on(sessionId, listener);
    return () => this.#emitter.off(sessionId, listener);
  }
}
