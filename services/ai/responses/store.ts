import { LRUCache } from 'lru-cache';
import { commandHandler } from '../../../shared/command-handler.ts';
import { foldEvents } from '../../../shared/decider.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { EventMetadata, EventStore, StoredEvent } from '../../../shared/event-store/types.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { takeTurn } from '../../../shared/turns.ts';
import { readCharacters } from '../usage/metering.ts';
import { isResponseId, responseIdOfItem } from './ids.ts';
import {
  type ResponseCommand,
  type ResponseEvent,
  responseDecider,
  responseStreamId,
  type StoredResponse,
} from './response.ts';
import type { Item } from './wire.ts';

/** The most responses a conversation is read back through (`previous_response_id`, then theirs …). */
export const MAX_CONVERSATION_DEPTH = 1_000;
/** Bytes of stored responses kept in memory: responses never change, so a copy is never stale. */
const RECENT_BYTES = 64 * 1024 * 1024;

/** What budgets weigh of some items: their JSON's bytes and the non-blank characters a model reads. */
export interface ItemsMeasure {
  bytes: number;
  characters: number;
}

/** A conversation read back, with its measure (summed from each response's, taken once). */
export interface Conversation extends ItemsMeasure {
  items: Item[];
}

/**
 * Responses kept as events of the log, one stream each, and read back from it: by id, as the
 * conversation a `previous_response_id` continues, or as the item an `item_reference` names. A
 * response belongs to a studio: another studio's token is told it does not exist.
 */
export class ResponseStore {
  readonly #recent = new LRUCache<string, StoredResponse>({ maxSize: RECENT_BYTES });
  /** Each stored response's items, measured once. */
  readonly #measures = new LRUCache<string, ItemsMeasure>({ max: 100_000 });

  readonly #commands;

  constructor(private readonly events: EventStore) {
    // Read back from the log, not from read models: nothing to wait for.
    this.#commands = commandHandler(responseDecider, {
      events,
      streamOf: (command: ResponseCommand) => responseStreamId(command.stored.response.id),
    });
  }

  /** Appends the response; resolves once it is durable, so its id can be continued at once. */
  async save(stored: StoredResponse, metadata: EventMetadata): Promise<void> {
    await this.#commands({ type: 'CreateResponse', stored }, metadata);
    this.#remember(stored);
  }

  /** The response, or 404 when it does not exist or belongs to another studio. */
  async get(id: string, identity: Identity, param?: string): Promise<StoredResponse> {
    const stored = await this.#find(id);
    if (!stored || !visibleTo(stored, identity)) {
      throw new ApiError('not_found', `response ${id} does not exist`, param ? { param } : {});
    }
    return stored;
  }

  /**
   * The conversation up to and including response `id`: the input and output items of each
   * response of the chain, oldest first. Instructions are not carried over (as OpenAI does). A
   * conversation counts against the request's body limit (`limit.bodyBytes`) as if it were sent
   * whole: once the responses read back pass what the request's own input left of it
   * (`limit.leftBytes`, of their items' JSON), it is refused (413). A response read from the log
   * (not one kept in memory) is read in a turn of the event loop of its own (`takeTurn`), so other
   * requests are answered while long conversations are read.
   */
  async conversation(
    id: string,
    identity: Identity,
    limit: { bodyBytes: number; leftBytes: number },
  ): Promise<Conversation> {
    const chain: StoredResponse[] = [];
    const measure: ItemsMeasure = { bytes: 0, characters: 0 };
    for (let next: string | null = id; next !== null; ) {
      if (chain.length === MAX_CONVERSATION_DEPTH) {
        throw new ApiError(
          'validation_failed',
          `previous_response_id: the conversation is longer than ${MAX_CONVERSATION_DEPTH} responses; send its items as input instead`,
          { param: 'previous_response_id' },
        );
      }
      // A response read from the log (megabytes, maybe) is read and parsed in a turn of its own.
      if (!this.#recent.has(next)) await takeTurn();
      const stored: StoredResponse = await this.get(next, identity, 'previous_response_id');
      const { bytes, characters } = this.#measureOf(stored);
      measure.bytes += bytes;
      measure.characters += characters;
      if (measure.bytes > limit.leftBytes) {
        throw new ApiError(
          'payload_too_large',
          `previous_response_id: the conversation and this input come to more than the ${limit.bodyBytes / (1024 * 1024)} MiB a request may carry; start a new conversation, or send fewer of its items as input`,
          { param: 'previous_response_id' },
        );
      }
      chain.push(stored);
      next = stored.response.previous_response_id;
    }
    const items = chain.reverse().flatMap((stored) => [...stored.input, ...stored.response.output]);
    return { items, ...measure };
  }

  /**
   * Replaces each `item_reference` to an item the gateway made with that item. References to other
   * ids are left as they are: only an upstream that made them can resolve them.
   */
  async resolveReferences(items: readonly Item[], identity: Identity): Promise<Item[]> {
    const resolved: Item[] = [];
    for (const item of items) {
      const responseId = item.type === 'item_reference' ? responseIdOfItem(String(item.id)) : undefined;
      if (responseId === undefined) {
        resolved.push(item);
        continue;
      }
      const stored = await this.#find(responseId);
      const found =
        stored && visibleTo(stored, identity)
          ? [...stored.input, ...stored.response.output].find((candidate) => candidate.id === item.id)
          : undefined;
      if (!found)
        throw new ApiError('not_found', `item ${String(item.id)} does not exist`, { param: 'input' });
      resolved.push(found);
    }
    return resolved;
  }

  async #find(id: string): Promise<StoredResponse | undefined> {
    // Only ids the gateway could have made reach the log (nor can odd text become a stream id).
    if (!isResponseId(id)) return undefined;
    const recent = this.#recent.get(id);
    if (recent) return recent;
    const events = (await this.events.readStream(responseStreamId(id))) as StoredEvent<
      ResponseEvent['type'],
      ResponseEvent['data']
    >[];
    const { stored } = foldEvents(responseDecider, events);
    if (stored) this.#remember(stored);
    return stored;
  }

  #measureOf(stored: StoredResponse): ItemsMeasure {
    const { id } = stored.response;
    let measure = this.#measures.get(id);
    if (measure === undefined) {
      measure = measureItems([...stored.input, ...stored.response.output]);
      this.#measures.set(id, measure);
    }
    return measure;
  }

  #remember(stored: StoredResponse): void {
    const { bytes } = this.#measureOf(stored);
    if (bytes <= RECENT_BYTES / 16) this.#recent.set(stored.response.id, stored, { size: bytes });
  }
}

export const measureItems = (items: readonly Item[]): ItemsMeasure => ({
  bytes: Buffer.byteLength(JSON.stringify(items)),
  characters: readCharacters(items),
});

function visibleTo(stored: StoredResponse, identity: Identity): boolean {
  if (identity.kind === 'admin') return true;
  return identity.kind === 'user' && identity.studioId === stored.studioId;
}
