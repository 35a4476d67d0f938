import pino, { type Logger } from 'pino';
import { tracing } from './observability/tracing.ts';

/** Paths pino replaces with [redacted] wherever they appear in a log object. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.value',
  '*.secret',
  '*.token',
  '*.user_token',
  '*.apiKey',
  '*.api_key',
];

/**
 * Without a destination, lines go to stdout asynchronously: a line is queued and written by the
 * next write the event loop gets to, so under load many lines leave in one write instead of one
 * blocking `write(2)` each (at the default level, a line per request). What is queued is flushed
 * when the process exits, also after an uncaught error; only a SIGKILL can lose the last lines.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'studio' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: errorForLog },
      timestamp: pino.stdTimeFunctions.isoTime,
      // With traces on, a line written during a request names its trace (and span); otherwise nothing.
      mixin: () => tracing().logFields(),
      // Without a trace the fields are one shared empty object: the line's own object is kept as is.
      mixinMergeStrategy: (line, fields) => ('trace_id' in fields ? Object.assign(fields, line) : line),
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

const MAX_MESSAGE = 300;

/**
 * What a log line keeps of an error: its class, its code and where it was thrown, never the data it
 * carries. Drivers hang the statement's parameters, the row's values (`detail`) or the request body
 * on their errors, and messages quote values (`invalid input syntax for type uuid: "…"`, a JSON
 * parser's excerpt of its input): a message ends before its first quote, and is cut short.
 */
export function errorForLog(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const code = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .join('\n');
  return {
    type: error.constructor?.name ?? error.name,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    message: withoutQuotedText(error.message),
    ...(frames ? { stack: frames } : {}),
    ...(error.cause !== undefined && depth < 2 ? { cause: errorForLog(error.cause, depth + 1) } : {}),
  };
}

function withoutQuotedText(message: string): string {
  const quote = message.search(/["'`]/);
  const kept = quote < 0 ? message : `${message.slice(0, quote)}…`;
  return kept.length > MAX_MESSAGE ? `${kept.slice(0, MAX_MESSAGE)}…` : kept;
}

export type { Logger };
