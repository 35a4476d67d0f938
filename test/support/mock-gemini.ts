import type { ServerResponse } from 'node:http';
import { type Json, type MockHandler, sendJson, wireMock } from './mock-ai-upstreams.ts';

/**
 * A mock of Google's Gemini API (`v1beta`) on loopback, its shapes per Google's API reference
 * (generateContent, streamGenerateContent with `alt=sse`, batchEmbedContents, models.list, and the
 * `{error: {code, message, status}}` body of a failure). By default it answers the way the real API
 * does, echoing the last user text; a test scripts anything else. It refuses a call without
 * `x-goog-api-key` the way Google does.
 */

export const GEMINI_MODEL_VERSION = 'gemini-2.5-flash';

export const geminiWire = {
  /** A GenerateContentResponse of one candidate. */
  response(parts: Json[], options: { finishReason?: string; usage?: Json; index?: number } = {}): Json {
    return {
      candidates: [
        {
          content: { parts, role: 'model' },
          ...(options.finishReason === undefined ? {} : { finishReason: options.finishReason }),
          index: options.index ?? 0,
        },
      ],
      usageMetadata: options.usage ?? {
        promptTokenCount: 7,
        candidatesTokenCount: 3,
        totalTokenCount: 10,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: 7 }],
      },
      modelVersion: GEMINI_MODEL_VERSION,
      responseId: 'mAitaLmkHPPlz7IPvtfUqQ4',
    };
  },
  /** Google's error body. */
  error(code: number, status: string, message: string): Json {
    return { error: { code, message, status } };
  },
};

/** Answers `status` with Google's error body. */
export const geminiError =
  (code: number, status: string, message: string): MockHandler =>
  (_req, res) =>
    sendJson(res, code, geminiWire.error(code, status, message));

/** Starts Gemini's SSE answer (`alt=sse`): `data:` lines only, events apart by CRLF as Google sends them. */
export function geminiSse(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  return {
    send: (data: unknown) => res.write(`data: ${JSON.stringify(data)}\r\n\r\n`),
    end: () => res.end(),
  };
}

/** Answers with these stream events, then ends the body. */
export const geminiStream =
  (events: Json[]): MockHandler =>
  (_req, res) => {
    const sse = geminiSse(res);
    for (const event of events) sse.send(event);
    sse.end();
  };

const lastUserText = (body: Json): string => {
  const content = [...(body.contents ?? [])].reverse().find((c: Json) => c.role === 'user');
  return (content?.parts ?? []).map((p: Json) => p.text ?? '').join('');
};

const CALL =
  /^\/v1beta\/models\/([^/:?]+):(generateContent|streamGenerateContent\?alt=sse|batchEmbedContents)$/;

const geminiDefault: MockHandler = (req, res) => {
  if (!req.headers['x-goog-api-key'])
    return sendJson(
      res,
      403,
      geminiWire.error(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers."),
    );
  if (req.method === 'GET' && req.path.startsWith('/v1beta/models?'))
    return sendJson(res, 200, {
      models: [
        {
          name: 'models/gemini-2.5-flash',
          inputTokenLimit: 1_048_576,
          outputTokenLimit: 65_536,
          supportedGenerationMethods: ['generateContent', 'countTokens'],
        },
      ],
    });
  const call = req.method === 'POST' ? CALL.exec(req.path) : null;
  if (!call)
    return sendJson(res, 404, geminiWire.error(404, 'NOT_FOUND', `${req.method} ${req.path} is not found.`));
  const body = JSON.parse(req.body.toString());
  if (call[2] === 'batchEmbedContents')
    return sendJson(res, 200, {
      embeddings: body.requests.map((r: Json, i: number) => ({
        values: Array.from({ length: r.outputDimensionality ?? 3 }, (_, d) => i + d / 10),
      })),
    });
  const text = `echo: ${lastUserText(body)}`;
  if (call[2] === 'generateContent')
    return sendJson(res, 200, geminiWire.response([{ text }], { finishReason: 'STOP' }));
  return geminiStream([
    geminiWire.response([{ text: 'echo: ' }]),
    geminiWire.response([{ text: lastUserText(body) }], { finishReason: 'STOP' }),
  ])(req, res);
};

export const geminiMock = () => wireMock(geminiDefault);
