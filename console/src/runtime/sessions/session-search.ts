import { useEffect, useState } from 'preact/hooks';
import type { Part, Session } from '../../../../sdk/types.ts';
import { failureOf } from '../../api/failure.ts';
import { agent, runtimeFetch } from '../../api/runtime.ts';

const textOf = (parts: readonly Part[]) =>
  parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join(' ')
    .replace(/<file [^>]*>[\s\S]*?<\/file>\n*/g, '')
    .trim();

/**
 * The first message of each session listed, read once each and only while a search is typed: the
 * search matches a session by its title, its id or what it began with (all in the page).
 */
export function useFirstMessages(
  sessions: readonly Session[],
  searching: boolean,
): ReadonlyMap<string, string> {
  const [first, setFirst] = useState<ReadonlyMap<string, string>>(new Map());
  useEffect(() => {
    if (!searching) return;
    const missing = sessions.filter((session) => !first.has(session.id));
    if (missing.length === 0) return;
    let current = true;
    void Promise.all(
      missing.map(async (session) => {
        const page = await agent()
          .messages(session.id, { limit: 1 })
          .catch(() => undefined);
        return [session.id, textOf(page?.items[0]?.parts ?? [])] as const;
      }),
    ).then((found) => {
      if (current) setFirst((known) => new Map([...known, ...found]));
    });
    return () => {
      current = false;
    };
  }, [sessions, searching, first]);
  return first;
}

/** Whether a session matches what was typed (any case): its title, id or first message. */
export function matches(session: Session, firstMessage: string | undefined, query: string): boolean {
  const needle = query.trim().toLowerCase();
  if (needle === '') return true;
  return [session.title, session.id, firstMessage ?? ''].some((text) => text.toLowerCase().includes(needle));
}

/** `DELETE /api/sdk/sessions/:id`: the session leaves every list and route (its events stay in the log). */
export async function deleteSession(sessionId: string): Promise<void> {
  const response = await runtimeFetch(`/api/sdk/sessions/${encodeURIComponent(sessionId)}`, {
    method: 'DELETE',
  });
  if (!response.ok) throw failureOf(response, await response.json().catch(() => undefined));
}
