import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from '../config.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';

/** How long a client may take to send a whole request (headers and body): a stalled upload gets 408. */
export const REQUEST_TIMEOUT_MS = 120_000;
export const HEADERS_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface Listening {
  server: Server;
  url: string;
}

/**
 * Every Studio HTTP server is made here: the same timeouts, and requests that fail below the front door
 * (over-long headers or URL, a malformed request line, an incomplete request) still get the one
 * error envelope with a request id instead of Node's bare status line.
 */
export async function listen(
  app: RequestListener,
  host: string,
  port: number,
  logger: Logger,
): Promise<Listening> {
  const server = createServer(
    { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS },
    app,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    answerClientError(error, socket, logger);
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new ConfigError(
              `${host}:${port} is already in use (another Studio?): stop it or choose another port`,
            )
          : error,
      );
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const displayHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `http://${displayHost}:${address.port}` };
}

const REASONS: Partial<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** What Node's parser said, as the error a client sees; undefined when there is no one to answer. */
export function clientErrorOf(error: NodeJS.ErrnoException): ApiError | undefined {
  const code = error.code ?? '';
  if (code === 'ECONNRESET' || code === 'EPIPE') return undefined;
  const as = (kind: ErrorCode, message: string) => new ApiError(kind, message);
  if (code === 'HPE_HEADER_OVERFLOW')
    return as('headers_too_large', 'the request line and headers are larger than this server accepts');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_TIMEOUT')
    return as('request_timeout', 'the request was not received in time');
  return as('malformed_request', 'the request is not valid HTTP/1.1');
}

function answerClientError(error: NodeJS.ErrnoException, socket: Socket, logger: Logger): void {
  const answer = clientErrorOf(error);
  const requestId = randomUUID();
  if (answer)
    logger.info({ requestId, code: error.code, status: answer.status }, 'request refused by the HTTP parser');
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!answer || !socket.writable || inFlight?.headersSent) {
    // Nothing to say, or a response has already begun on this socket.
    socket.destroy();
    return;
  }
  const body = JSON.stringify(answer.toBody(requestId));
  socket.end(
    [
      `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? 'Error'}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `x-request-id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
