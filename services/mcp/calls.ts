import { createHash } from 'node:crypto';
import type { EventMetadata } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { budgetRefusal } from '../ai/generation.ts';
import type { PayloadCapture } from '../ai/payloads/payload-capture.ts';
import { FREE, type Price } from '../ai/prices/price.ts';
import type { RateLimits } from '../ai/rate-limits/rate-limits.ts';
import type { UsageRecorder } from '../ai/usage/recorder.ts';
import type { McpServerRecord } from './servers/read-model.ts';

/** Records how a call that began at `started` ended. */
export function callNote(
  gw: GatewayContext,
  caller: Caller,
  server: string,
  tool: string,
  args: unknown,
  started = Date.now(),
) {
  const metadata: EventMetadata = { actor: `token:${caller.tokenId}`, requestId: caller.requestId };
  const base = { ...caller, server, tool, argumentsSha256: digest(args) };
  return async (status: ToolCallStatus, resultBytes = 0, costMicroUsd = 0): Promise<void> => {
    const data: ToolCalledData = {
      ...base,
      status,
      latencyMs: Date.now() - started,
      resultBytes,
      costMicroUsd,
    };
    await gw.events.append(mcpCallsStreamId(caller.studioId), [{ type: 'McpToolCalled', data }], {
      expected: 'any',
      metadata,
    });
  };
}

/** One stream per studio (`mcp-calls-<studio>`): every tool call its tokens made through `/v1/mcp`. */
export const mcpCallsStreamId = (studioId: string) => `mcp-calls-${studioId}`;

/**
 * How a call ended: `ok` and `tool_error` (the tool said it failed) reached the tool server;
 * `upstream_error` did and got no answer; the others were refused before it.
 */
export type ToolCallStatus =
  | 'ok'
  | 'tool_error'
  | 'upstream_error'
  | 'not_allowed'
  | 'rate_limited'
  | 'budget_exceeded';

export interface ToolCalledData {
  studioId: string;
  tokenId: string;
  requestId: string;
  server: string;
  tool: string;
  /** SHA-256 (hex) of the arguments as sent, as JSON: what was asked, never what it said. */
  argumentsSha256: string;
  status: ToolCallStatus;
  latencyMs: number;
  /** The answer's size as JSON bytes (0 when none came). */
  resultBytes: number;
  /** What it was charged, in micro-dollars. */
  costMicroUsd: number;
}

export type McpCallEvent = { type: 'McpToolCalled'; data: ToolCalledData };

export const MCP_CALL_EVENT_TYPES = ['McpToolCalled'] as const satisfies readonly McpCallEvent['type'][];

/** Who calls: a user token of a studio, in one HTTP request. */
export interface Caller {
  studioId: string;
  tokenId: string;
  requestId: string;
}

/** What refused a call before the tool server was asked, said to the MCP client in its error. */
export class CallRefused extends Error {
  override readonly name = 'CallRefused';
  constructor(
    readonly status: Extract<ToolCallStatus, 'rate_limited' | 'budget_exceeded'>,
    message: string,
  ) {
    super(message);
  }
}

export interface GovernedCallDeps {
  gw: GatewayContext;
  limits: RateLimits;
  usage: UsageRecorder;
  /** Keeps the call's arguments and result where the studio captures payloads. */
  payloads: Pick<PayloadCapture, 'keep'>;
}

const digest = (args: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(args ?? {}))
    .digest('hex');

/** A tool's price a call, in micro-dollars: its own, else its server's. */
export const priceOfCall = (server: McpServerRecord, tool: string): number =>
  server.pricing.perToolMicroUsd[tool] ?? server.pricing.perCallMicroUsd;

/** A price per call as the budgets weigh a generation: one input "token" at the call's price. */
const callPrice = (microUsd: number): Price => ({ ...FREE, input_per_mtok: microUsd });

/**
 * One tool call, governed as a generation is: admitted by the rate limits (rpm, max_concurrent),
 * its price reserved under the studio's hard budgets and charged once the server answered, and
 * recorded in the studio's `mcp-calls` stream however it ends. `call` reaches the tool server and
 * answers its result and whether the tool said it failed.
 */
export async function governedCall<T>(
  deps: GovernedCallDeps,
  caller: Caller,
  server: McpServerRecord,
  tool: string,
  args: unknown,
  call: () => Promise<{ result: T; isError: boolean; bytes: number }>,
): Promise<T> {
  const started = Date.now();
  const model = `mcp/${server.id}__${tool}`;
  const price = priceOfCall(server, tool);
  const note = callNote(deps.gw, caller, server.id, tool, args, started);

  let permit: Awaited<ReturnType<RateLimits['admit']>>;
  try {
    permit = await deps.limits.admit(
      { kind: 'user', studioId: caller.studioId, tokenId: caller.tokenId, models: null },
      { inputTokensAtMost: 0, inputTokensAtLeast: 0 },
    );
  } catch (error) {
    await note('rate_limited');
    throw new CallRefused('rate_limited', error instanceof Error ? error.message : String(error));
  }
  let stopHolding: () => void = () => undefined;
  try {
    const reservation =
      price > 0
        ? await deps.usage.reserve({
            studioId: caller.studioId,
            tokenId: caller.tokenId,
            requestId: caller.requestId,
            model,
            price: callPrice(price),
            ask: { inputTokensAtMost: 1, inputTokensAtLeast: 1 },
            outputLimit: 0,
            leaseMs: deps.usage.leaseMsOf('text'),
          })
        : ({ kind: 'unbudgeted' } as const);
    if (reservation.kind === 'refused') {
      await note('budget_exceeded');
      throw new CallRefused(
        'budget_exceeded',
        budgetRefusal(reservation).message.replace('generation', 'call'),
      );
    }
    if (reservation.kind === 'reserved') {
      stopHolding = deps.usage.holdLease(
        { reservationId: reservation.reservationId, studioId: caller.studioId },
        deps.usage.leaseMsOf('text'),
      );
    }
    const startedAt =
      reservation.kind === 'reserved' ? reservation.startedAt : new Date(started).toISOString();
    const usage = (costMicroUsd: number, status: number) => ({
      studioId: caller.studioId,
      tokenId: caller.tokenId,
      requestId: caller.requestId,
      model,
      modality: 'text' as const,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: Date.now() - started,
      costMicroUsd,
      status,
      startedAt,
      ...(reservation.kind === 'reserved' ? { reservationId: reservation.reservationId } : {}),
    });
    let answered: { result: T; isError: boolean; bytes: number };
    try {
      answered = await call();
    } catch (error) {
      await note('upstream_error');
      if (reservation.kind === 'reserved')
        await deps.usage.record({
          type: 'GenerationFailed',
          data: { ...usage(0, 502), errorCode: 'upstream_error' },
        });
      throw error;
    }
    // The tool server did the work, whether the tool says it succeeded or not: the call is charged.
    if (price > 0) await deps.usage.record({ type: 'GenerationCompleted', data: usage(price, 200) });
    await note(answered.isError ? 'tool_error' : 'ok', answered.bytes, price);
    deps.payloads.keep(
      caller.studioId,
      caller.requestId,
      { tool: `${server.id}__${tool}`, arguments: args },
      answered.result,
    );
    return answered.result;
  } finally {
    // After the call's record: until then, this process counts its reservation as open.
    stopHolding();
    permit.release(0);
  }
}
