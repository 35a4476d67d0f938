/**
 * A generation's rate limits, checked and taken in one call to the store that holds them, all or
 * nothing: its requests counted, its tokens read, a slot taken on every key with a concurrency
 * limit. One call, because on a shared store each call is a round trip every generation pays for.
 *
 * Counts are fixed windows (`windowMs` from the first count of the window). Slots are leases that
 * last `leaseMs` unless renewed, so the slots of a process that died come back on their own once
 * its leases run out: a plain counter taken on start and given back at the end would keep a dead
 * process's slots for ever, and one with a window would reset under holders still running.
 */
export interface Admission {
  /** Counted once per generation let through: refused when the count would pass `limit`. */
  requests: readonly { key: string; limit: number }[];
  /** Charged after the generation (`settle`): refused once the count has reached `limit`. */
  tokens: readonly { key: string; limit: number }[];
  /** A slot of each, held as lease `leaseId`: refused when one already has `max` held. */
  slots: readonly { key: string; max: number }[];
  leaseId: string;
  leaseMs: number;
  windowMs: number;
}

/** A count in its window: how much is used and how long until the window starts again. */
export interface Count {
  used: number;
  resetMs: number;
}

export interface AdmissionAnswer {
  admitted: boolean;
  /** Each of `requests`, with this generation counted when admitted, without it when refused. */
  requests: Count[];
  tokens: Count[];
  /** Whether each of `slots` was full. Slots are looked at only when the counts let it through. */
  full: boolean[];
}

/**
 * What a generation gives back when it ends: its slots, and the tokens it used charged. A charge may
 * be negative (an attempt given back); a count never goes below 0, so a give-back that lands after its
 * window ended cannot lend the next window an attempt.
 */
export interface Settlement {
  slots: readonly string[];
  leaseId: string;
  tokens: readonly { key: string; charge: number }[];
  windowMs: number;
}

export interface AdmissionStore {
  admit(ask: Admission): Promise<AdmissionAnswer>;
  settle(done: Settlement): Promise<void>;
  /** Extends the leases `leaseId` still holds on `slots` to `leaseMs` from now (one that ran out stays out). */
  renew(slots: readonly string[], leaseId: string, leaseMs: number): Promise<void>;
}

/** This process's counts and slots alone. */
export function memoryAdmissions(now: () => number = Date.now): AdmissionStore {
  const counts = new Map<string, { used: number; endsAt: number }>();
  const slots = new Map<string, Map<string, number>>();
  const countAt = (key: string, at: number) => {
    const count = counts.get(key);
    return count && count.endsAt > at ? count : { used: 0, endsAt: at };
  };
  /** The live leases of `key`; the ones run out are let go only when they would make it look full. */
  const heldAt = (key: string, at: number, max: number) => {
    const leases = slots.get(key) ?? new Map<string, number>();
    if (leases.size >= max) for (const [id, expiresAt] of leases) if (expiresAt <= at) leases.delete(id);
    return leases;
  };
  const add = (key: string, amount: number, at: number, windowMs: number) => {
    const count = countAt(key, at);
    const endsAt = count.used === 0 ? at + windowMs : count.endsAt;
    const used = Math.max(0, count.used + amount);
    counts.set(key, { used, endsAt });
    return { used, resetMs: endsAt - at };
  };
  return {
    async admit(ask) {
      const at = now();
      const reading = (key: string) => {
        const count = countAt(key, at);
        return { used: count.used, resetMs: count.endsAt - at };
      };
      const requests = ask.requests.map((r) => reading(r.key));
      const tokens = ask.tokens.map((t) => reading(t.key));
      const countsRefuse =
        ask.requests.some((r, i) => requests[i]!.used + 1 > r.limit) ||
        ask.tokens.some((t, i) => tokens[i]!.used >= t.limit);
      const full = ask.slots.map((s) => !countsRefuse && heldAt(s.key, at, s.max).size >= s.max);
      if (countsRefuse || full.includes(true)) return { admitted: false, requests, tokens, full };
      for (const s of ask.slots)
        slots.set(s.key, heldAt(s.key, at, s.max).set(ask.leaseId, at + ask.leaseMs));
      const counted = ask.requests.map((r) => add(r.key, 1, at, ask.windowMs));
      return { admitted: true, requests: counted, tokens, full };
    },
    async settle(done) {
      const at = now();
      for (const key of done.slots) {
        const leases = slots.get(key);
        leases?.delete(done.leaseId);
        if (leases?.size === 0) slots.delete(key);
      }
      for (const t of done.tokens) add(t.key, t.charge, at, done.windowMs);
    },
    async renew(keys, leaseId, leaseMs) {
      const until = now() + leaseMs;
      for (const key of keys) {
        const leases = slots.get(key);
        if (leases?.has(leaseId)) leases.set(leaseId, until);
      }
    },
  };
}
