import { gateway } from '../api/gateway.ts';
import { unwrap } from '../api/http.ts';
import type { TokenRecord } from '../api/records.ts';
import { ErrorNotice } from '../ui/ErrorNotice.tsx';
import { useResource } from '../ui/use-resource.ts';

/**
 * What a budget or a rate limit applies to: the whole studio (the default) or one of its tokens,
 * picked by name from the studio's live tokens (`tokens/list`), never typed as an id. `field` is
 * the form field (`token_id`, empty for the whole studio); `scopeOf` names a rule's scope.
 */
export function useTokenScope(studioId: string | undefined, id: string) {
  const tokens = useResource(async () => {
    if (studioId === undefined) return undefined;
    const answer = unwrap(
      await gateway.GET('/v1/studios/tokens/list', { params: { query: { studio_id: studioId } } }),
    ) as { items: TokenRecord[] };
    return answer.items;
  }, [studioId]);
  const live = (tokens.data ?? []).filter((token) => token.revoked_at === null);
  const nameOf = (tokenId: string) => tokens.data?.find((token) => token.id === tokenId)?.name;
  const scopeOf = (rule: { token_id: string | null }) => {
    if (rule.token_id === null) return 'the studio';
    const name = nameOf(rule.token_id);
    return name === undefined ? `token ${rule.token_id}` : `token ${name} (${rule.token_id})`;
  };
  const field = (
    <div class="field">
      <label for={id}>Applies to</label>
      <select id={id} name="token_id" key={studioId}>
        <option value="">Whole studio</option>
        {live.map((token) => (
          <option key={token.id} value={token.id}>
            Token {token.name} ({token.prefix}…)
          </option>
        ))}
      </select>
      <ErrorNotice error={tokens.error} />
    </div>
  );
  return { field, scopeOf, reload: tokens.reload };
}
