import { z } from 'zod';
import { type EnvEntry, type EnvListItem, envProjection } from '../../projections/env.ts';
import { commandHandler } from '../../shared/command-handler.ts';
import { ApiError } from '../../shared/errors.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineAction, defineService } from '../../shared/http/action.ts';
import { scrubCredentials } from '../../shared/scrub-credentials.ts';
import { parseDotenv } from './dotenv-file.ts';
import { ENV_KEY_PATTERN, ENV_STREAM, envDecider } from './env.ts';
import { EnvReader, mask } from './reader.ts';
import { storedValue } from './stored-value.ts';

const key = z.string().regex(ENV_KEY_PATTERN, 'A-Z, 0-9 and _, not starting with a digit').max(200);
const admin = ['admin'] as const;
const MAX_VALUE_LENGTH = 64 * 1024;
export const MAX_IMPORT_BYTES = 512 * 1024;
export const MAX_IMPORT_LINES = 10_000;

/**
 * `declaredKeys` are the env keys services declare: of the process environment only those are
 * listed, so the list never shows unrelated (or secret) variables of the machine.
 */
export function envService(gw: GatewayContext, declaredKeys: () => string[]) {
  const reader = new EnvReader(gw);
  const entries = () => gw.projections.state(envProjection);

  // A value stored in clear before encryption became the default may still hold a URL's password.
  const view = (entry: EnvEntry): EnvListItem => ({
    key: entry.key,
    value: entry.secret ? mask(reader.get(entry.key) ?? '') : scrubCredentials(entry.value),
    secret: entry.secret,
    source: 'store',
    updated_at: entry.updated_at,
  });

  const run = commandHandler(envDecider, {
    events: gw.events,
    streamOf: () => ENV_STREAM,
    readModels: gw.projections,
  });

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
        summary:
          'List env variables (all but public store values masked); store values override the process env',
        input: z.strictObject({}),
        handler: () => {
          const stored = [...entries().values()].map(view);
          const fromProcess = [...new Set(declaredKeys())]
            .filter((k) => !entries().has(k) && gw.processEnv[k])
            .map(
              (k): EnvListItem => ({
                key: k,
                value: mask(gw.processEnv[k]!),
                secret: true,
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
        summary: 'Set an env variable, encrypted unless `secret: false` marks it public',
        input: z.strictObject({
          key,
          value: z.string().max(MAX_VALUE_LENGTH),
          secret: z.boolean().default(true),
        }),
        handler: async (input, ctx) => {
          const stored = storedValue(input.value, !input.secret, gw.secrets);
          await run({ type: 'SetVariable', key: input.key, stored }, ctx.metadata);
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
          await run({ type: 'RemoveVariable', key: input.key }, ctx.metadata);
          return { key: input.key, removed: true };
        },
      }),
      defineAction({
        service: 'env',
        action: 'import',
        method: 'POST',
        identities: admin,
        summary:
          'Import a .env file in one atomic append, every value encrypted but the keys listed in `public`',
        input: z.strictObject({
          content: z.string(),
          overwrite: z.boolean().default(true),
          public: z.array(key).max(MAX_IMPORT_LINES).default([]),
        }),
        handler: async (input, ctx) => {
          assertImportable(input.content);
          const parsed = parseDotenv(input.content);
          const publicKeys = new Set(input.public);
          const tooLong = parsed.entries.filter((e) => e.value.length > MAX_VALUE_LENGTH);
          const entriesToImport = parsed.entries
            .filter((e) => e.value.length <= MAX_VALUE_LENGTH)
            .map((e) => ({ key: e.key, stored: storedValue(e.value, publicKeys.has(e.key), gw.secrets) }));
          const inFile = new Set(parsed.entries.map((e) => e.key));
          const unknownPublic = [...publicKeys].filter((k) => !inFile.has(k));
          const result = await run(
            { type: 'ImportVariables', entries: entriesToImport, overwrite: input.overwrite },
            ctx.metadata,
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
              ...unknownPublic.map((k) => ({
                line: 0,
                message: `${k}: listed in public but not in the file`,
              })),
            ],
          };
        },
      }),
    ],
  });
}

/** dotenv files are small: a bound on bytes and lines keeps one import from holding the process. */
function assertImportable(content: string): void {
  const bytes = Buffer.byteLength(content);
  if (bytes > MAX_IMPORT_BYTES)
    throw new ApiError(
      'payload_too_large',
      `the .env content is ${bytes} bytes; at most ${MAX_IMPORT_BYTES} bytes are accepted`,
      { param: 'content' },
    );
  const lines = (content.match(/\r\n?|\n/g)?.length ?? 0) + 1;
  if (lines > MAX_IMPORT_LINES)
    throw new ApiError(
      'payload_too_large',
      `the .env content has ${lines} lines; at most ${MAX_IMPORT_LINES} lines are accepted`,
      { param: 'content' },
    );
}
