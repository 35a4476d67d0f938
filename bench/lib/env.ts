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
