import { EventEmitter } from 'node:events';

/** A token delta of a part being written: sent live to subscribers, never stored. */
export interface PartDelta {
  type: 'part.delta';
  sessionId: string;
  messageId: string;
  partId: string;
  delta: string;
}

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
