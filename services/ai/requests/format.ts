import type { IncomingMessage } from 'node:http';

/** The route a generation request came to, as the request log names it: `chat/completions`, `responses`, `anthropic/v1/messages` … */
export function formatOf(req: Pick<IncomingMessage, 'url'>): string {
  const path = (req.url ?? '').split('?')[0]!;
  return path.replace(/^\/v1\/ai\//i, '').slice(0, 100) || path;
}
