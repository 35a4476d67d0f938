import type { ServerResponse } from 'node:http';
import type { ServedRequest } from '../http/request.ts';

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** A span its caller ends: a generation lives across callbacks. */
export interface OpenSpan {
  set(attributes: SpanAttributes): void;
  /** Marks the span failed: the error's class and code only, never its message (it may quote data). */
  fail(error: unknown): void;
  end(): void;
  /** Runs `work` with this span as the current one, so spans started inside are its children. */
  within<T>(work: () => T): T;
}

/** Server spans, one per request: started before the request log, named after the route served. */
export interface RequestTracing {
  serve(req: ServedRequest, res: ServerResponse, routeName: () => string, next: () => void): void;
}

/** The process's tracing: OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set, else nothing at all. */
export interface Tracing extends RequestTracing {
  readonly enabled: boolean;
  /** Starts a child of the current span. */
  start(name: string, attributes?: SpanAttributes, kind?: 'internal' | 'client'): OpenSpan;
  /** Runs `work` in a child span of the current one, ended when `work` settles. */
  span<T>(
    name: string,
    attributes: SpanAttributes,
    work: (span: OpenSpan) => Promise<T>,
    kind?: 'internal' | 'client',
  ): Promise<T>;
  /** The fields a log line written now carries (`trace_id`, `span_id`), or none. */
  logFields(): Record<string, string>;
  /** Exports what is buffered. */
  flush(): Promise<void>;
}

const NO_FIELDS: Record<string, string> = Object.freeze({}) as Record<string, string>;

const NO_SPAN: OpenSpan = {
  set: () => undefined,
  fail: () => undefined,
  end: () => undefined,
  within: (work) => work(),
};

/** Tracing off: every call does the work and nothing else. */
export const NO_TRACING: Tracing = {
  enabled: false,
  serve: (_req, _res, _routeName, next) => next(),
  start: () => NO_SPAN,
  span: (_name, _attributes, work) => work(NO_SPAN),
  logFields: () => NO_FIELDS,
  flush: async () => undefined,
};

let active: Tracing = NO_TRACING;
let starting: Promise<void> | undefined;

/** The process's tracing (OpenTelemetry's context and provider are the process's too). */
export function tracing(): Tracing {
  return active;
}

/**
 * Turns traces on for this process when an OTLP endpoint is configured; once, whoever asks first
 * (the gateway and the runtime may share a process). OpenTelemetry's modules are imported only
 * then: a process without the setting never loads them.
 */
export function startTracing(endpoint: string | undefined): Promise<void> {
  if (endpoint === undefined) return Promise.resolve();
  starting ??= import('./otel.ts').then(({ openTelemetryTracing }) => {
    active = openTelemetryTracing(endpoint);
  });
  return starting;
}
