import type { GenerationAsk } from '../generation-ask.ts';
import { costCeilingMicroUsd, type Price } from '../prices/price.ts';
import type { BudgetRule } from './budgets.ts';
import { type HeldHere, type LedgerState, reservedIn, spentIn } from './ledger.ts';
import { windowKey } from './windows.ts';

export interface ReservationRequest {
  tokenId: string | null;
  price: Price;
  ask: GenerationAsk;
  /** Output tokens the generation may produce when the client sets no cap (0: it produces none). */
  outputLimit: number;
  /** ISO 8601: the instant the budgets' windows are taken at. */
  now: string;
}

export type ReservationDecision =
  | {
      kind: 'reserved';
      amountMicroUsd: number;
      /** The output tokens paid for: the cap the generation must keep to. */
      outputTokens: number;
    }
  | { kind: 'refused'; rule: BudgetRule; availableMicroUsd: number; neededMicroUsd: number };

/** What `rule` has left at `now`: its amount less what was spent and is reserved in the window. */
export function availableUnder(
  rule: BudgetRule,
  ledger: LedgerState,
  now: string,
  heldHere?: HeldHere,
): number {
  const key = windowKey(rule.window, now);
  const taken = spentIn(ledger, rule.tokenId, key) + reservedIn(ledger, rule.tokenId, key, now, heldHere);
  return rule.amountMicroUsd - taken;
}

/**
 * Whether the hard budgets `rules` can pay for the worst case of a generation, and how much to set
 * aside. The worst case is the input's upper bound plus the output cap at the model's prices; when
 * the cap asked (or the model's limit) costs more than the budgets have left, the cap is lowered to
 * what they can pay, and only a generation that could not produce one token is refused.
 * `heldHere`: the reservations of generations running in the deciding process, open until settled.
 */
export function decideReservation(
  rules: readonly BudgetRule[],
  ledger: LedgerState,
  request: ReservationRequest,
  heldHere?: HeldHere,
): ReservationDecision {
  const { price, ask, now } = request;
  const tightest = rules
    .map((rule) => ({ rule, available: availableUnder(rule, ledger, now, heldHere) }))
    .sort((a, b) => a.available - b.available)[0];
  const asked = ask.maxOutputTokens ?? request.outputLimit;
  const fixed = costCeilingMicroUsd(price, {
    inputTokens: ask.inputTokensAtMost,
    outputTokens: 0,
    ...(ask.images === undefined ? {} : { images: ask.images }),
    ...(ask.audioSeconds === undefined ? {} : { audioSeconds: ask.audioSeconds }),
    ...(ask.videoSeconds === undefined ? {} : { videoSeconds: ask.videoSeconds }),
  });
  const worstCase = (outputTokens: number) =>
    fixed + costCeilingMicroUsd(price, { inputTokens: 0, outputTokens });
  if (!tightest) return { kind: 'reserved', amountMicroUsd: worstCase(asked), outputTokens: asked };

  const { rule, available } = tightest;
  const affordable =
    price.output_per_mtok === 0 ? asked : Math.floor((available - fixed) / price.output_per_mtok);
  const outputTokens = Math.min(asked, affordable);
  if (fixed > available || (asked > 0 && outputTokens < 1)) {
    return {
      kind: 'refused',
      rule,
      availableMicroUsd: Math.max(0, available),
      neededMicroUsd: worstCase(Math.min(asked, 1)),
    };
  }
  return { kind: 'reserved', amountMicroUsd: worstCase(outputTokens), outputTokens };
}
