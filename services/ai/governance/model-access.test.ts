import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/errors.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { assertModelAllowed, mayCallModel } from './model-access.ts';

const user = (models: readonly string[] | null): Identity => ({
  kind: 'user',
  tokenId: 'tok_1',
  studioId: 'acme',
  models,
});

function refusal(identity: Identity, model: string) {
  try {
    assertModelAllowed(identity, model);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, type: error.type, code: error.code };
    throw error;
  }
  return 'allowed';
}

describe('model access', () => {
  it('a token without models may call any model', () => {
    expect(refusal(user(null), 'openai/gpt-5')).toBe('allowed');
  });

  it('a token limited to dev/* may call dev models and is refused any other with a 403 permission_error', () => {
    expect(refusal(user(['dev/*']), 'dev/echo')).toBe('allowed');
    expect(refusal(user(['dev/*']), 'openai/gpt-4o-mini')).toEqual({
      status: 403,
      type: 'permission_error',
      code: 'model_not_allowed',
    });
  });

  it('the admin key is never restricted', () => {
    expect(mayCallModel({ kind: 'admin' }, 'openai/gpt-5')).toBe(true);
  });

  it('a guest calls no model', () => {
    expect(mayCallModel({ kind: 'guest' }, 'dev/echo')).toBe(false);
  });
});
