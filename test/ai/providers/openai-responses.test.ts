import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectApiError } from '../../support/gateway.ts';
import {
  faults,
  gate,
  type Json,
  openAiResponsesStream,
  openAiResponsesWire,
  sendJson,
  type WireMock,
} from '../../support/mock-ai-upstreams.ts';
import { type ProviderGateway, startOpenAiGateway } from './support.ts';

// The openai provider speaks the Responses API natively: requests pass through to its /responses
// (the conversation the gateway keeps sent whole), answers and stream events come back as they are,
// under the gateway's response id and model id.

const KEY = 'sk-proj-openai-test-key-0123456789abcdef';
const MODEL = 'openai/gpt-4.1-mini';
let mock: WireMock;
let pg: ProviderGateway;

beforeAll(async () => {
  ({ mock, pg } = await startOpenAiGateway(KEY));
});
beforeEach(() => mock.reset());
afterAll(() => Promise.all([pg?.close(), mock?.close()]));

const reasoning = { type: 'reasoning', id: 'rs_upstream', summary: [], encrypted_content: 'opaque' };

describe('openai: responses, natively', () => {
  it('the body passes through but for model; the answer comes back under the gateway id and model', async () => {
    const answer = openAiResponsesWire.response(
      [
        reasoning,
        { type: 'web_search_call', id: 'ws_upstream', status: 'completed', action: { type: 'search' } },
        openAiResponsesWire.message('It is sunny.'),
      ],
      { usage: openAiResponsesWire.usage(40, 12) },
    );
    mock.reply((_req, res) => sendJson(res, 200, { ...answer, service_tier: 'default' }));
    const request = {
      model: MODEL,
      instructions: 'Answer briefly.',
      input: [
        { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Weather in Oslo?' }] },
      ],
      tools: [
        { type: 'function' as const, name: 'weather', parameters: { type: 'object' }, strict: true },
        { type: 'web_search' as const },
      ],
      tool_choice: 'auto' as const,
      reasoning: { effort: 'low' as const },
      include: ['reasoning.encrypted_content' as const],
      metadata: { ticket: '42' },
      temperature: 0.2,
      max_output_tokens: 500,
    };
    const response = await pg.client().responses.create(request);

    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.path).toBe('/v1/responses');
    expect(mock.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    // Items are sent typed (a message without a type is one), as the gateway stores them.
    expect(mock.body()).toEqual({
      ...request,
      input: [{ type: 'message', ...request.input[0] }],
      model: 'gpt-4.1-mini',
      stream: false,
    });
    expect(response).toMatchObject({
      ...JSON.parse(JSON.stringify(answer)),
      id: expect.stringMatching(/^resp_[0-9a-f]{24}$/),
      model: MODEL,
      service_tier: 'default',
    });
    expect(response.output_text).toBe('It is sunny.');
    expect(await pg.client().responses.retrieve(response.id)).toEqual(response);
  });

  it('a stream goes through event by event, the final one once the response is recorded', async () => {
    const events = openAiResponsesWire.events(['Echo: ', 'held ', 'words'], {
      usage: openAiResponsesWire.usage(2, 3),
    });
    const held = gate();
    mock.reply(openAiResponsesStream(events, { after: 0, wait: held.wait }));
    const { response, events: received } = await pg.stream('/v1/ai/responses', {
      model: MODEL,
      input: 'held words',
      stream: true,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await received.next();
    expect(first?.event).toBe('response.created');
    const id = first?.data.response.id;
    expect(id).toMatch(/^resp_[0-9a-f]{24}$/);
    const created = events[0] as Json;
    expect(first?.data).toEqual({ ...created, response: { ...created.response, id, model: MODEL } });
    held.open();
    const rest = await received.rest();
    expect(rest.map((e) => e.event)).toEqual(events.slice(1).map((e) => e.type));
    expect(rest.slice(0, -1).map((e) => e.data)).toEqual(
      events
        .slice(1, -1)
        .map((e) => ('response' in e ? { ...e, response: { ...e.response, id, model: MODEL } } : e)),
    );
    const completed = rest.at(-1)!.data;
    expect(completed.response).toMatchObject({
      id,
      model: MODEL,
      status: 'completed',
      usage: { total_tokens: 5 },
    });
    expect(mock.body()).toEqual({
      model: 'gpt-4.1-mini',
      input: [{ type: 'message', role: 'user', content: 'held words' }],
      stream: true,
    });
    expect(mock.requests[0]!.headers.accept).toBe('text/event-stream');
    expect((await pg.get(`/v1/ai/responses/${id}`)).json).toEqual(completed.response);
  });

  it('the official client streams it too, with responses.stream', async () => {
    const deltas: string[] = [];
    const final = await pg
      .client()
      .responses.stream({ model: MODEL, input: 'one two' })
      .on('response.output_text.delta', (event) => deltas.push(event.delta))
      .finalResponse();
    expect(deltas).toEqual(['Echo: ', 'one ', 'two']);
    expect(final).toMatchObject({ model: MODEL, output_text: 'Echo: one two', status: 'completed' });
  });

  it('previous_response_id: the upstream gets the whole conversation, never the id', async () => {
    mock.script((_req, res) =>
      sendJson(
        res,
        200,
        openAiResponsesWire.response([reasoning, openAiResponsesWire.message('first answer')]),
      ),
    );
    const first = await pg
      .client()
      .responses.create({ model: MODEL, input: 'first', instructions: 'be kind' });
    const second = await pg.client().responses.create({
      model: MODEL,
      input: 'second',
      previous_response_id: first.id,
    });
    expect(mock.body(1)).toEqual({
      model: 'gpt-4.1-mini',
      stream: false,
      input: [
        { type: 'message', role: 'user', content: 'first' },
        reasoning,
        openAiResponsesWire.message('first answer'),
        { type: 'message', role: 'user', content: 'second' },
      ],
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe('Echo: second');
  });

  it('a conversation moves between a translated model and a native one', async () => {
    const onDev = await pg.client().responses.create({ model: 'dev/echo', input: 'start on dev' });
    const onOpenAi = await pg.client().responses.create({
      model: MODEL,
      input: 'go on',
      previous_response_id: onDev.id,
    });
    // The gateway's item ids (of a translated answer) are not the upstream's: they are left out.
    expect(mock.body().input).toEqual([
      { type: 'message', role: 'user', content: 'start on dev' },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Echo: start on dev', annotations: [], logprobs: [] }],
      },
      { type: 'message', role: 'user', content: 'go on' },
    ]);
    mock.reply((_req, res) =>
      sendJson(res, 200, openAiResponsesWire.response([reasoning, openAiResponsesWire.message('native')])),
    );
    const native = await pg.client().responses.create({
      model: MODEL,
      input: 'think',
      previous_response_id: onOpenAi.id,
    });
    // Back on dev/echo: the upstream's reasoning item has no chat form and is dropped.
    const back = await pg.client().responses.create({
      model: 'dev/echo',
      input: 'and back',
      previous_response_id: native.id,
    });
    expect(back.output_text).toBe('Echo: and back');
  });

  it("an upstream's refusal reaches the client in the envelope; nothing is stored", async () => {
    mock.reply(
      faults.status(400, { error: { message: 'Unknown parameter: bogus', type: 'invalid_request_error' } }),
    );
    const res = await pg.post('/v1/ai/responses', { model: MODEL, input: 'x', bogus: true });
    expect(expectApiError(res, 502, 'upstream_error').message).toMatch(/400: Unknown parameter: bogus/);
    expect(mock.body()).toMatchObject({ bogus: true });
  });

  it('an error event mid-stream ends the stream with an error event the client throws', async () => {
    const events = openAiResponsesWire.events(['Echo: ', 'x']);
    mock.reply(
      openAiResponsesStream([
        ...events.slice(0, 4),
        {
          type: 'error',
          code: 'server_error',
          message: `overloaded, key ${KEY}`,
          sequence_number: 4,
        } as never,
      ]),
    );
    const stream = await pg.client().responses.create({ model: MODEL, input: 'x', stream: true });
    const types: string[] = [];
    const error = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().catch((e: unknown) => e);
    expect(types).toEqual(events.slice(0, 4).map((e) => e.type));
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toMatch(/overloaded/);
    expect(String((error as Error).message)).not.toContain(KEY);
  });

  it('a stream that ends before its response completed is an error, not a response', async () => {
    mock.reply(openAiResponsesStream(openAiResponsesWire.events(['Echo: ', 'x']).slice(0, -1)));
    const { events } = await pg.stream('/v1/ai/responses', { model: MODEL, input: 'x', stream: true });
    const last = (await events.rest()).at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({
      type: 'error',
      code: 'upstream_error',
      error: { code: 'upstream_error' },
    });
  });

  it('usage is recorded with the upstream’s token counts, streamed or not', async () => {
    const before = await usageOf(MODEL);
    mock.reply((_req, res) =>
      sendJson(
        res,
        200,
        openAiResponsesWire.response([openAiResponsesWire.message('ok')], {
          usage: openAiResponsesWire.usage(100, 20),
        }),
      ),
    );
    await pg.client().responses.create({ model: MODEL, input: 'count me' });
    mock.reply(
      openAiResponsesStream(openAiResponsesWire.events(['ok'], { usage: openAiResponsesWire.usage(50, 5) })),
    );
    await pg.client().responses.stream({ model: MODEL, input: 'count me too' }).finalResponse();
    const after = await usageOf(MODEL);
    expect(after.requests - before.requests).toBe(2);
    expect(after.input_tokens - before.input_tokens).toBe(150);
    expect(after.output_tokens - before.output_tokens).toBe(25);
  });
});

async function usageOf(model: string): Promise<Json> {
  const items = (await pg.get('/v1/ai/usage?group_by=model')).json.items as Json[];
  return items.find((item) => item.model === model) ?? { requests: 0, input_tokens: 0, output_tokens: 0 };
}
