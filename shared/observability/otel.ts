import {
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import type { OpenSpan, SpanAttributes, Tracing } from './tracing.ts';

/**
 * OpenTelemetry for this process: spans exported in batches over OTLP/HTTP (JSON) to
 * `<endpoint>/v1/traces`, the context carried across awaits (AsyncLocalStorage), W3C `traceparent`
 * honoured on incoming requests. No automatic instrumentation: the spans are the ones Studio makes
 * (docs/operations.md, "Traces").
 */
export function openTelemetryTracing(endpoint: string): Tracing {
  const processor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
  );
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME || 'studio' }),
    spanProcessors: [processor],
    instrumentations: [],
  });
  sdk.start();
  const tracer = trace.getTracer('studio');

  const open = (span: Span, parent: Context): OpenSpan => {
    const current = trace.setSpan(parent, span);
    return {
      set: (attributes) => span.setAttributes(defined(attributes)),
      fail: (error) => {
        const type = errorType(error);
        span.setAttribute(ATTR_ERROR_TYPE, type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: type });
      },
      end: () => span.end(),
      within: (work) => context.with(current, work),
    };
  };

  const start = (name: string, attributes: SpanAttributes = {}, kind: 'internal' | 'client' = 'internal') => {
    const parent = context.active();
    const span = tracer.startSpan(
      name,
      { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes: defined(attributes) },
      parent,
    );
    return open(span, parent);
  };

  return {
    enabled: true,
    start,
    async span(name, attributes, work, kind) {
      const span = start(name, attributes, kind);
      try {
        return await span.within(() => work(span));
      } catch (error) {
        span.fail(error);
        throw error;
      } finally {
        span.end();
      }
    },
    serve(req, res, routeName, next) {
      const parent = propagation.extract(context.active(), req.headers);
      const span = tracer.startSpan(
        req.method,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method } },
        parent,
      );
      const current = trace.setSpan(parent, span);
      // Listeners added from here on (the request log's) run in the span: their lines carry its id.
      context.bind(current, res);
      res.once('close', () => {
        const route = routeName();
        const status = res.headersSent ? res.statusCode : 499;
        span.updateName(`${req.method} ${route}`);
        span.setAttributes({ [ATTR_HTTP_ROUTE]: route, [ATTR_HTTP_RESPONSE_STATUS_CODE]: status });
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      context.with(current, next);
    },
    logFields(): Record<string, string> {
      const span = trace.getSpan(context.active());
      if (span === undefined) return {};
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    flush: () => processor.forceFlush(),
  };
}

function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const kept: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) kept[key] = value;
  return kept;
}

function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.constructor.name : 'error';
}
