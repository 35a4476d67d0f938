import { matchesPattern } from '../../shared/model-patterns.ts';
import { defineProjection } from '../../shared/projections/projection.ts';
import type { StudioEvent } from '../studios/studio.ts';

/**
 * Whether a token whose tools are `patterns` (`tokens/apply`'s `tools`: `<server>__<tool>` names, or
 * patterns with `*` as the only wildcard, as its models are written) may use the namespaced `name`.
 * No patterns, or an empty list: nothing.
 */
export const allowsTool = (patterns: readonly string[] | undefined, name: string): boolean =>
  patterns?.some((pattern) => matchesPattern(pattern, name)) ?? false;

/**
 * Whether any name of server `serverId` (`<id>__…`) could match one of `patterns`: servers no
 * pattern can reach are not asked (nor started) for a token's lists.
 */
export function mayReach(patterns: readonly string[] | undefined, serverId: string): boolean {
  const prefix = `${serverId}__`;
  return (
    patterns?.some((pattern) => {
      const star = pattern.indexOf('*');
      if (star < 0) return pattern.startsWith(prefix);
      const literal = pattern.slice(0, star);
      return prefix.startsWith(literal) || literal.startsWith(prefix);
    }) ?? false
  );
}

/** Token id → the MCP tools it may call; a token issued without `tools` is absent (it may call none). */
export const mcpAccessProjection = defineProjection<Map<string, readonly string[]>, StudioEvent>({
  name: 'mcp-access',
  schemaVersion: 1,
  handles: ['TokenIssued'],
  initialState: () => new Map(),
  toSnapshot: (state) => [...state],
  fromSnapshot: (snapshot) => new Map(snapshot as [string, string[]][]),
  apply(state, event) {
    if (event.type !== 'TokenIssued' || event.data.tools === undefined) return;
    state.set(event.data.tokenId, [...event.data.tools]);
  },
});
