import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { gateway } from '../api/gateway.ts';
import { unwrap } from '../api/http.ts';
import type { StudioRecord } from '../api/records.ts';
import type { ConsoleIdentity } from '../api/session.ts';
import { EmptyState } from '../ui/EmptyState.tsx';
import { ErrorNotice } from '../ui/ErrorNotice.tsx';
import { useResource } from '../ui/use-resource.ts';

/**
 * The studio a page is about: the admin picks one (the first not removed, to start with); a user
 * token has its own and no choice. Returns the id (undefined while the list loads) and the picker.
 */
export function useStudioChoice(identity: ConsoleIdentity, id: string) {
  const admin = identity.kind === 'admin';
  const studios = useResource(async () => {
    if (!admin) return [];
    const answer = unwrap(await gateway.GET('/v1/studios/list', { params: { query: {} } })) as {
      items: StudioRecord[];
    };
    return answer.items;
  });
  // What the admin picked, else the first studio not removed: derived, never set by an effect, so a
  // pick made the moment the list renders is not overwritten by the default arriving after it.
  const [picked, setPicked] = useState<string | undefined>(undefined);
  const chosen = picked ?? (studios.data?.find((s) => s.status !== 'removed') ?? studios.data?.[0])?.id;
  const studioId = identity.kind === 'user' ? identity.studio_id : chosen;
  const picker =
    identity.kind === 'user' ? (
      <p class="muted">
        Studio <code>{identity.studio_id}</code>
      </p>
    ) : (
      <div class="field">
        <label for={id}>Studio</label>
        <select id={id} value={chosen ?? ''} onChange={(event) => setPicked(event.currentTarget.value)}>
          {studios.data?.length === 0 && <option value="">No studios yet</option>}
          {studios.data?.map((studio) => (
            <option key={studio.id} value={studio.id}>
              {studio.name} ({studio.id}){studio.status === 'active' ? '' : ` · ${studio.status}`}
            </option>
          ))}
        </select>
        {studios.data?.length === 0 && (
          <EmptyState
            what="No studios yet."
            how={
              <>
                This page is about one studio: create the first on the <Link href="/studios">Studios</Link>{' '}
                page.
              </>
            }
          />
        )}
        <ErrorNotice error={studios.error} />
      </div>
    );
  return { studioId, picker };
}
