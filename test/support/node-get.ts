import { type Agent, type IncomingHttpHeaders, request } from 'node:http';

export interface NodeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the request went on a kept-alive connection opened before it. */
  reusedSocket: boolean;
}

/**
 * A GET with node:http, read whole: through `agent` (keep-alive, one socket, to send a request on a
 * connection opened earlier) or on a connection of its own (`false`). fetch pools connections as it
 * likes; these tests need to know which connection a request went on.
 */
export function nodeGet(
  url: string,
  agent: Agent | false,
  headers: Record<string, string> = {},
): Promise<NodeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reusedSocket: req.reusedSocket }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
