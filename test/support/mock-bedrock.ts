import type { ServerResponse } from 'node:http';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { type MockHandler, type Recorded, sendJson, type WireMock, wireMock } from './mock-ai-upstreams.ts';

/**
 * A mock Amazon Bedrock (runtime and control plane on one loopback port), per AWS's API reference
 * for Converse, ConverseStream and ListFoundationModels, and AWS's SigV4 and event stream
 * documentation. Every request is recorded and its signature checked by signing the received
 * request again with the AWS SDK's signer: a request whose signature does not verify is answered
 * 403 InvalidSignatureException, as AWS does. A Bedrock API key (bearer) is checked against `apiKey`.
 */

export type { Recorded };

/** Besides the common mock's, every request's signature (or API key) is checked first. */
export type BedrockMock = WireMock;

export interface BedrockMockOptions {
  region: string;
  /** Secret keys by access key id: what a signature is verified with. */
  keys: Record<string, string>;
  /** A Bedrock API key accepted as `Authorization: Bearer`. */
  apiKey?: string;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const text = (value: string) => ({ type: 'string' as const, value });

/** One event stream frame, encoded with the SDK's codec. */
export function eventFrame(type: string, payload: unknown): Uint8Array {
  const headers: MessageHeaders = {
    ':event-type': text(type),
    ':content-type': text('application/json'),
    ':message-type': text('event'),
  };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) });
}

/** An exception frame, as ConverseStream sends a failure after the response has begun. */
export function exceptionFrame(type: string, message: string): Uint8Array {
  const headers: MessageHeaders = {
    ':exception-type': text(type),
    ':content-type': text('application/json'),
    ':message-type': text('exception'),
  };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) });
}

/** Converse's JSON answer. */
export function converseAnswer(
  content: unknown[],
  options: { stopReason?: string; inputTokens?: number; outputTokens?: number } = {},
) {
  const inputTokens = options.inputTokens ?? 12;
  const outputTokens = options.outputTokens ?? 4;
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: options.stopReason ?? 'end_turn',
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
    metrics: { latencyMs: 321 },
  };
}

type Block = { text: string[] } | { tool: { toolUseId: string; name: string }; input: string[] };

/** The frames of a whole streamed answer of text blocks and toolUse blocks. */
export function converseStreamFrames(
  blocks: Block[],
  options: { stopReason?: string; inputTokens?: number; outputTokens?: number } = {},
): Uint8Array[] {
  const inputTokens = options.inputTokens ?? 12;
  const outputTokens = options.outputTokens ?? 4;
  return [
    eventFrame('messageStart', { role: 'assistant' }),
    ...blocks.flatMap((block, contentBlockIndex) => [
      ...('tool' in block
        ? [eventFrame('contentBlockStart', { start: { toolUse: block.tool }, contentBlockIndex })]
        : []),
      ...('text' in block
        ? block.text.map((t) => eventFrame('contentBlockDelta', { delta: { text: t }, contentBlockIndex }))
        : block.input.map((input) =>
            eventFrame('contentBlockDelta', { delta: { toolUse: { input } }, contentBlockIndex }),
          )),
      eventFrame('contentBlockStop', { contentBlockIndex }),
    ]),
    eventFrame('messageStop', { stopReason: options.stopReason ?? 'end_turn' }),
    eventFrame('metadata', {
      usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      metrics: { latencyMs: 321 },
    }),
  ];
}

/** Streams frames; each `Uint8Array` is one write, so a test may cut frames wherever it likes. */
export function streamFrames(writes: (Uint8Array | Promise<void>)[]): MockHandler {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.flushHeaders();
    for (const write of writes) {
      if (write instanceof Uint8Array) await new Promise<void>((done) => res.write(write, () => done()));
      else await write;
    }
    res.end();
  };
}

/** Bedrock's error answer: `{message}` and the error type in `x-amzn-ErrorType`. */
export function bedrockError(status: number, type: string, message: string): MockHandler {
  return (_req, res) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': '2b7a4e7c-1f7e-4c43-9b3e-5c2d0a8e1f00',
    });
    res.end(JSON.stringify({ message }));
  };
}

export const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/**
 * Signs the received request again with the SDK's signer, from what arrived: its method, raw path
 * and query, the headers it names as signed, its body, its `x-amz-date`. Answers why it does not
 * verify, or undefined when it does.
 */
export async function signatureProblem(
  req: Recorded,
  options: BedrockMockOptions,
): Promise<string | undefined> {
  const authorization = String(req.headers.authorization ?? '');
  const parts = AUTHORIZATION.exec(authorization);
  if (!parts) return `not a SigV4 Authorization header: ${authorization}`;
  const [, keyId, day, region, service, signedHeaders] = parts;
  const secret = options.keys[keyId!];
  if (!secret) return `unknown access key ${keyId}`;
  if (region !== options.region) return `signed for region ${region}`;
  if (service !== 'bedrock') return `signed for service ${service}`;
  const date = String(req.headers['x-amz-date'] ?? '');
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!at || !date.startsWith(day!)) return `x-amz-date ${date} does not match the scope's day ${day}`;
  const names = signedHeaders!.split(';');
  for (const required of ['host', 'x-amz-date'])
    if (!names.includes(required)) return `${required} is not signed`;
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = req.headers[name];
    if (value === undefined) return `signed header ${name} was not received`;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const url = new URL(req.path, 'http://mock');
  const query: Record<string, string> = Object.fromEntries(url.searchParams);
  const signer = new SignatureV4({
    service: 'bedrock',
    region: options.region,
    credentials: {
      accessKeyId: keyId!,
      secretAccessKey: secret,
      ...(req.headers['x-amz-security-token']
        ? { sessionToken: String(req.headers['x-amz-security-token']) }
        : {}),
    },
    sha256: Sha256,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: String(req.headers.host).split(':')[0]!,
      path: url.pathname,
      query,
      headers,
      body: req.body.length ? req.body.toString('utf8') : undefined,
    },
    {
      signingDate: new Date(Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!)),
    },
  );
  if (signed.headers.authorization !== authorization)
    return `the signature does not verify: expected ${signed.headers.authorization}`;
  return undefined;
}

/** Checks auth (a verified signature, or the API key); answers why not as AWS does, or false when it is fine. */
async function refused(req: Recorded, res: ServerResponse, options: BedrockMockOptions): Promise<boolean> {
  const authorization = String(req.headers.authorization ?? '');
  if (options.apiKey && authorization.startsWith('Bearer ')) {
    if (authorization === `Bearer ${options.apiKey}`) return false;
    bedrockError(
      403,
      'AccessDeniedException',
      'Invalid API Key format: Must start with pre-defined prefix',
    )(req, res);
    return true;
  }
  const problem = await signatureProblem(req, options);
  if (problem === undefined) return false;
  bedrockError(
    403,
    'InvalidSignatureException',
    `The request signature we calculated does not match: ${problem}`,
  )(req, res);
  return true;
}

const lastUserText = (body: { messages?: { role: string; content: { text?: string }[] }[] }) =>
  [...(body.messages ?? [])]
    .reverse()
    .find((m) => m.role === 'user')
    ?.content.map((b) => b.text ?? '')
    .join('') ?? '';

export const FOUNDATION_MODELS = {
  modelSummaries: [
    {
      modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0',
      modelId: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
      modelName: 'Claude 3.5 Sonnet',
      providerName: 'Anthropic',
      inputModalities: ['TEXT', 'IMAGE'],
      outputModalities: ['TEXT'],
      responseStreamingSupported: true,
      customizationsSupported: [],
      inferenceTypesSupported: ['ON_DEMAND'],
      modelLifecycle: { status: 'ACTIVE' },
    },
    {
      modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0',
      modelId: 'amazon.titan-embed-text-v2:0',
      modelName: 'Titan Text Embeddings V2',
      providerName: 'Amazon',
      inputModalities: ['TEXT'],
      outputModalities: ['EMBEDDING'],
      responseStreamingSupported: false,
      customizationsSupported: [],
      inferenceTypesSupported: ['ON_DEMAND'],
      modelLifecycle: { status: 'ACTIVE' },
    },
    {
      modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/cohere.command-light-text-v14',
      modelId: 'cohere.command-light-text-v14',
      modelName: 'Command Light',
      providerName: 'Cohere',
      inputModalities: ['TEXT'],
      outputModalities: ['TEXT'],
      responseStreamingSupported: false,
      customizationsSupported: ['FINE_TUNING'],
      inferenceTypesSupported: ['ON_DEMAND'],
      modelLifecycle: { status: 'LEGACY' },
    },
    {
      modelArn: 'arn:aws:bedrock:us-east-1::foundation-model/stability.stable-image-core-v1:0',
      modelId: 'stability.stable-image-core-v1:0',
      modelName: 'Stable Image Core',
      providerName: 'Stability AI',
      inputModalities: ['TEXT'],
      outputModalities: ['IMAGE'],
      responseStreamingSupported: false,
      customizationsSupported: [],
      inferenceTypesSupported: ['ON_DEMAND'],
      modelLifecycle: { status: 'ACTIVE' },
    },
  ],
};

/** The default answers: "Echo: <last user text>" as JSON or a stream, the model list, 404 otherwise. */
const answer: MockHandler = (req, res) => {
  const path = new URL(req.path, 'http://mock').pathname;
  if (req.method === 'GET' && path === '/foundation-models') return sendJson(res, 200, FOUNDATION_MODELS);
  const call = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(path);
  if (req.method !== 'POST' || !call)
    return bedrockError(404, 'UnknownOperationException', `no operation at ${req.method} ${path}`)(req, res);
  const said = `Echo: ${lastUserText(JSON.parse(req.body.toString()))}`;
  if (call[2] === 'converse') return sendJson(res, 200, converseAnswer([{ text: said }]));
  return streamFrames(converseStreamFrames([{ text: said.split(/(?<=\s)/) }]))(req, res);
};

export const bedrockMock = (options: BedrockMockOptions): Promise<BedrockMock> =>
  wireMock(answer, (req, res) => refused(req, res, options));
