import { z } from 'zod';
import { type EnvEntry, envProjection } from '../../projections/env.ts';
import { handleCommand } from '../../shared/decider.ts';
import { type ActionContext, defineAction, defineService } from '../../shared/http/action.ts';
import { type GatewayContext, settle } from '../gateway/context.ts';
import { parseDotenv } from './dotenv-file.ts';
import {
  ENV_KEY_PATTERN,
  ENV_STREAM,
  type EnvCommand,
  envDecider,
  isSecretByName,
  type StoredValue,
} from './env.ts';
import { EnvReader, mask } from './reader.ts';

const key = z.string().regex(ENV_KEY_PATTERN, 'A-Z, 0-9 and _, not starting with a digit').max(200);
const admin = ['admin'] as const;
const MAX_VALUE_LENGTH = 64 * 1024;

export interface EnvListItem {
  key: string;
  value: string;
  secret: boolean;
  source: 'store' | 'process';
  updated_at: string | null;
}

/**
 * `declaredKeys` are the env keys services declare: of the process environment only those are
 * listed, so the list never shows unrelated (or secret) variables of the machine.
 */
export function envService(gw: GatewayContext, declaredKeys: () => string[]) {
  const reader = new EnvReader(gw);
  const entries = () => gw.projections.state(envProjection);

  const seal = (name: string, value: string, secret: boolean | undefined): StoredValue =>
    (secret ?? isSecretByName(name))
      ? { secret: true, sealed: gw.secrets.encrypt(value) }
      : { secret: false, value };

  const view = (entry: EnvEntry): EnvListItem => ({
    key: entry.key,
    value: entry.secret ? mask(reader.get(entry.key) ?? '') : entry.value,
    secret: entry.secret,
    source: 'store',
    updated_at: entry.updated_at,
  });

  async function run(command: EnvCommand, ctx: ActionContext) {
    const result = await handleCommand(gw.events, ENV_STREAM, envDecider, command, ctx.metadata);
    await settle(gw, result.position);
    return result;
  }

  return defineService({
    id: 'env',
    name: 'Runtime env',
    env: [],
    actions: [
      defineAction({
        service: 'env',
        action: 'list',
        method: 'GET',
        identities: admin,
        summary: 'List env variables (secrets masked); store values override the process env',
        input: z.strictObject({}),
        handler: () => {
          const stored = [...entries().values()].map(view);
          const fromProcess = [...new Set(declaredKeys())]
            .filter((k) => !entries().has(k) && gw.processEnv[k])
            .map(
              (k): EnvListItem => ({
                key: k,
                value: isSecretByName(k) ? mask(gw.processEnv[k]!) : gw.processEnv[k]!,
                secret: isSecretByName(k),
                source: 'process',
                updated_at: null,
              }),
            );
          return { items: [...stored, ...fromProcess].sort((a, b) => a.key.localeCompare(b.key)) };
        },
      }),
      defineAction({
        service: 'env',
        action: 'upsert',
        method: 'POST',
        identities: admin,
        summary: 'Set an env variable; secrets are stored encrypted',
        input: z.strictObject({
          key,
          value: z.string().max(MAX_VALUE_LENGTH),
          secret: z.boolean().optional(),
        }),
        handler: async (input, ctx) => {
          await run(
            { type: 'SetVariable', key: input.key, stored: seal(input.key, input.value, input.secret) },
            ctx,
          );
          return { item: view(entries().get(input.key)!) };
        },
      }),
      defineAction({
        service: 'env',
        action: 'remove',
        method: 'POST',
        identities: admin,
        summary: 'Remove an env variable from the store',
        input: z.strictObject({ key }),
        handler: async (input, ctx) => {
          await run({ type: 'RemoveVariable', key: input.key }, ctx);
          return { key: input.key, removed: true };
        },
      }),
      defineAction({
        service: 'env',
        action: 'import',
        method: 'POST',
        identities: admin,
        summary: 'Import a .env file in one atomic append',
        input: z.strictObject({ content: z.string(), overwrite: z.boolean().default(true) }),
        handler: async (input, ctx) => {
          const parsed = parseDotenv(input.content);
          const tooLong = parsed.entries.filter((e) => e.value.length > MAX_VALUE_LENGTH);
          const entriesToImport = parsed.entries
            .filter((e) => e.value.length <= MAX_VALUE_LENGTH)
            .map((e) => ({ key: e.key, stored: seal(e.key, e.value, undefined) }));
          const result = await run(
            { type: 'ImportVariables', entries: entriesToImport, overwrite: input.overwrite },
            ctx,
          );
          const summary = result.events.find((e) => e.type === 'EnvImported')?.data;
          return {
            imported: summary?.imported ?? [],
            skipped: summary?.skipped ?? [],
            errors: [
              ...parsed.errors,
              ...tooLong.map((e) => ({
                line: 0,
                message: `${e.key}: value longer than ${MAX_VALUE_LENGTH} characters`,
              })),
            ],
          };
        },
      }),
    ],
  });
}
