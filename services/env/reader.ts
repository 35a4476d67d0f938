import { envProjection } from '../../projections/env.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';

/** Reads runtime env: a value set in the store overrides the process environment. */
export class EnvReader {
  #opened = new Map<string, string>();

  constructor(private readonly gw: GatewayContext) {}

  get(key: string): string | undefined {
    const entry = this.gw.projections.state(envProjection).get(key);
    if (!entry) return this.gw.processEnv[key] || undefined;
    if (!entry.secret) return entry.value;
    let value = this.#opened.get(entry.sealed);
    if (value === undefined) {
      value = this.gw.secrets.decrypt(entry.sealed);
      this.#opened.set(entry.sealed, value);
    }
    return value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
}

/** How a value is shown: secrets as `••••` plus their last 4 characters, and only when long enough. */
export function mask(value: string): string {
  return value.length >= 12 ? `••••${value.slice(-4)}` : '••••';
}
