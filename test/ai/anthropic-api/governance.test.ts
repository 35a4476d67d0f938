import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOk, studioWithToken } from '../../support/admin.ts';
import { expectAnthropicError } from '../../support/anthropic-errors.ts';
import { type ProviderGateway, startProviderGateway } from '../providers/support.ts';
import { anthropicClient, usageEvents } from './support.ts';

// Model access, rate limits and budgets on the Messages API, exactly as on chat completions, and
// how Anthropic's SDK reports each refusal.

let pg: ProviderGateway;
let studios = 0;

beforeAll(async () => {
  pg = await startProviderGateway({});
});
afterAll(async () => {
  await pg?.close();
});

async function studio() {
  const id = `g${++studios}`;
  return { id, ...(await studioWithToken(pg.gw, id)) };
}

const hello = { model: 'dev/echo', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello' }] };

describe('governance on the Messages API', () => {
  it('a model the token may not call: PermissionDeniedError, and nothing recorded', async () => {
    const { id } = await studio();
    const limited = (
      await adminOk(pg.gw, 'POST', '/v1/studios/tokens/apply', { studio_id: id, models: ['openai/*'] })
    ).json;
    const error = await anthropicClient(pg.gw, { apiKey: limited.user_token })
      .messages.create(hello)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, type: 'permission_error', errorCode: 'model_not_allowed' });
    // count_tokens tells nothing of a model the token may not call either
    const counted = await anthropicClient(pg.gw, { apiKey: limited.user_token })
      .messages.countTokens({ model: 'dev/echo', messages: hello.messages })
      .catch((e: unknown) => e);
    expect(counted).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(await usageEvents(pg.gw, id)).toEqual([]);
  });

  it('over a studio rate limit: RateLimitError with Retry-After and the rate-limit headers', async () => {
    const { id, token } = await studio();
    await adminOk(pg.gw, 'POST', '/v1/studios/limits/set', { studio_id: id, rpm: 1 });
    const client = anthropicClient(pg.gw, { apiKey: token });
    const first = await client.messages.create(hello).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    const error = await client.messages.create(hello).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', errorCode: 'rate_limited' });
    expect(Number((error as APIError).headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a hard budget that cannot pay: 402 billing_error (PaymentRequiredError), before any upstream call', async () => {
    const { id, token } = await studio();
    await adminOk(pg.gw, 'POST', '/v1/studios/budgets/set', {
      studio_id: id,
      amount_usd: 0.00001,
      window: 'day',
      mode: 'hard',
    });
    const res = await pg.gw.api('POST', '/v1/ai/anthropic/v1/messages', { token, body: hello });
    expectAnthropicError(res, 402, 'budget_exceeded', 'billing_error');
    const error = await anthropicClient(pg.gw, { apiKey: token })
      .messages.create(hello)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.PaymentRequiredError);
    expect(error).toMatchObject({ status: 402, type: 'billing_error', errorCode: 'budget_exceeded' });
    expect(await usageEvents(pg.gw, id)).toEqual([]);
  });

  it('a hard budget lowers max_tokens to what it can pay: the answer stops at max_tokens', async () => {
    // dev/echo: 1 micro-dollar an input byte reserved, 2 an output token; 600 leave room for ~80 tokens
    const budgeted = async () => {
      const { id, token } = await studio();
      await adminOk(pg.gw, 'POST', '/v1/studios/budgets/set', {
        studio_id: id,
        amount_usd: 0.0006,
        window: 'day',
        mode: 'hard',
      });
      return { id, client: anthropicClient(pg.gw, { apiKey: token }) };
    };
    const long = {
      ...hello,
      max_tokens: 1000,
      messages: [{ role: 'user' as const, content: 'w '.repeat(200) }],
    };

    const json = await budgeted();
    const message = await json.client.messages.create(long);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBeLessThan(201);
    expect(message.usage.output_tokens).toBeGreaterThan(10);
    const [recorded] = await usageEvents(pg.gw, json.id);
    expect(recorded).toMatchObject({
      type: 'GenerationCompleted',
      outputTokens: message.usage.output_tokens,
    });
    expect(recorded?.reservationId).toEqual(expect.any(String));
    // what is left cannot pay for the input of another such request
    const refused = await json.client.messages.create(long).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.PaymentRequiredError);

    const streamed = await (await budgeted()).client.messages.stream(long).finalMessage();
    expect(streamed.stop_reason).toBe('max_tokens');
    expect(streamed.usage.output_tokens).toBe(message.usage.output_tokens);
  });
});
