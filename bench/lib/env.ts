/**
 * A positive number from the environment variable `name`, or undefined when it is unset or empty.
 * Any other value stops the benchmark with the variable named: a typo must not quietly measure
 * something else than what was asked.
 */
export function positiveFromEnv(name: string, options: { integer?: boolean } = {}): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (options.integer && !Number.isInteger(n)))
    throw new Error(
      `${name} must be a positive ${options.integer ? 'whole number' : 'number'}, not "${raw}"`,
    );
  return n;
}

/**
 * An on/off switch from the environment variable `name`: on when it is 1, off when it is 0, unset or
 * empty. Any other value (true, yes, a typo) stops the benchmark with the variable named, rather than
 * quietly measuring the default.
 */
export function switchFromEnv(name: string): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return false;
  if (raw === '1') return true;
  if (raw === '0') return false;
  throw new Error(`${name} must be 1 or 0 (or unset), not "${raw}"`);
}

/**
 * The comma-separated choices in the environment variable `name`, each one of `allowed`, or
 * `fallback` when it is unset or empty. An unknown choice stops the benchmark with it named.
 */
export function listFromEnv<T extends string>(
  name: string,
  allowed: readonly T[],
  fallback: readonly T[],
): T[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const chosen = raw.split(',').map((s) => s.trim());
  const unknown = chosen.filter((s) => !(allowed as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new Error(
      `${name}: unknown ${unknown.map((s) => `"${s}"`).join(', ')}; one or more of ${allowed.join(',')}`,
    );
  return chosen as T[];
}
