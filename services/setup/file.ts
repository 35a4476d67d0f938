import { parse } from 'yaml';
import { z } from 'zod';
import { ConnectionInput } from '../ai/connections/actions.ts';

/**
 * The setup file (`studio apply -f studio.yaml`): the admin state a team keeps in git. Secrets are
 * never in it: a `${NAME}` in any text is the environment variable NAME, read when applied.
 */
const Budget = z.strictObject({
  amount_usd: z.number().positive(),
  window: z.enum(['day', 'month', 'total']),
  mode: z.enum(['hard', 'soft']),
});
const Limits = z.strictObject({
  rpm: z.number().int().positive().optional(),
  tpm: z.number().int().positive().optional(),
  max_concurrent: z.number().int().positive().optional(),
});

export const SetupFile = z.strictObject({
  /** Env variables of the gateway (`env upsert`): secret unless `secret: false`. */
  env: z
    .array(z.strictObject({ key: z.string(), value: z.string(), secret: z.boolean().optional() }))
    .default([]),
  /** Provider connections, as `POST /v1/ai/providers/upsert` takes them. */
  providers: z.array(ConnectionInput).default([]),
  prices: z.record(z.string(), z.record(z.string(), z.number())).default({}),
  routes: z.array(z.record(z.string(), z.unknown()).and(z.object({ id: z.string() }))).default([]),
  studios: z
    .array(
      z.strictObject({
        id: z.string(),
        name: z.string().optional(),
        cache_ttl_s: z.number().int().min(0).optional(),
        tokens: z
          .array(
            z.strictObject({
              name: z.string().min(1),
              models: z.array(z.string()).optional(),
              /** The token's own budget and limits, within the studio's. */
              budget: Budget.optional(),
              limits: Limits.optional(),
            }),
          )
          .default([]),
        budgets: z
          .array(Budget)
          .max(1, "budgets: one studio-wide budget (a token's is set on the token)")
          .default([]),
        limits: Limits.optional(),
        /** Accounts that sign in to the console, made when missing (found by email). */
        accounts: z
          .array(
            z.strictObject({
              email: z.string(),
              name: z.string().optional(),
              password: z.string().optional(),
            }),
          )
          .default([]),
      }),
    )
    .default([]),
});
export type SetupFile = z.infer<typeof SetupFile>;

/** What is wrong with a setup file or reaching the gateway: said to the user as it is. */
export class SetupError extends Error {}

/** The file's state, its `${NAME}` references read from `env`; a missing one is an error naming it. */
export function readSetupFile(text: string, env: NodeJS.ProcessEnv): SetupFile {
  const missing = new Set<string>();
  const substitute = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
        const found = env[name];
        if (found === undefined) missing.add(name);
        return found ?? '';
      });
    if (Array.isArray(value)) return value.map(substitute);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v)]));
    return value;
  };
  let yaml: unknown;
  try {
    yaml = parse(text);
  } catch (error) {
    throw new SetupError(`the file is not YAML: ${(error as Error).message}`);
  }
  const parsed = substitute(yaml ?? {});
  if (missing.size > 0)
    throw new SetupError(`the file names environment variables that are not set: ${[...missing].join(', ')}`);
  const result = SetupFile.safeParse(parsed);
  if (!result.success) {
    const first = result.error.issues[0]!;
    throw new SetupError(`${first.path.join('.') || 'the file'}: ${first.message}`);
  }
  return result.data;
}
