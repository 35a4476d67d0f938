import pino, { type Logger } from 'pino';

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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'studio' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: errorForLog },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
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
