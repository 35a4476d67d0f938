import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ParsedUrlQuery, parse as parseQuery } from 'node:querystring';
import type { WireDialect } from './dialect.ts';
import type { Identity } from './identity.ts';

/**
 * Node's request as Studio serves it: the front door (`frontDoor`) sets these fields before anything
 * else runs. Endpoints use Node's own request and response and these helpers, never express's
 * methods: the API's requests do not pass through express (docs/decisions.md, "HTTP").
 */
export interface ServedRequest extends IncomingMessage {
  /** A server's request always has both. */
  method: string;
  url: string;
  requestId: string;
  identity: Identity;
  /** Whom it came from: the socket's peer, or the client a trusted proxy names (`clientAddressOf`). */
  clientAddress: string;
  /** Set when the request is for an action that speaks another API's wire format. */
  dialect?: WireDialect;
  /** The JSON body, once read (`readJsonBody`). */
  body?: unknown;
}

export type ServedResponse = ServerResponse<ServedRequest>;

declare module 'express-serve-static-core' {
  /** What express is handed has been through the front door too. */
  interface Request {
    requestId: string;
    identity: Identity;
    clientAddress: string;
    dialect?: WireDialect;
  }
}

/** The path of a request's URL, without its query (what express calls `req.path`). */
export function pathOf(url = '/'): string {
  // A request line may name an absolute URL (`GET http://host/path`): its path is what is asked for.
  if (!url.startsWith('/')) return URL.canParse(url) ? new URL(url).pathname : '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** A request header's value (the first, for the few Node keeps as a list). */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The query's parameters, read as express's "simple" query parser reads them (`node:querystring`). */
export function queryOf(req: IncomingMessage): ParsedUrlQuery {
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return parseQuery(query < 0 ? '' : url.slice(query + 1));
}

/** A JSON answer, written as express's `res.json` writes one. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendBody(res, status, 'application/json; charset=utf-8', JSON.stringify(body) ?? '');
}

/** A whole answer of `type`, its length declared; no body for HEAD (Node leaves it out). */
export function sendBody(res: ServerResponse, status: number, type: string, text: string): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}
