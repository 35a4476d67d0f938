import { ApiError } from '../../../shared/errors.ts';
import type { Identity } from '../../../shared/http/identity.ts';
import { allowsModel } from '../../../shared/model-patterns.ts';
import type { CatalogEntry } from '../catalog.ts';

/** Whether this identity may call `model`: the admin key any, a token those it is limited to (or any). */
export function mayCallModel(identity: Identity, model: string): boolean {
  switch (identity.kind) {
    case 'admin':
      return true;
    case 'user':
      return allowsModel(identity.models, model);
    case 'guest':
      return false;
    default: {
      const unknown: never = identity;
      throw new Error(`unknown identity ${JSON.stringify(unknown)}`);
    }
  }
}

/** Refuses a model the identity may not call (403 `model_not_allowed`), before anything goes upstream. */
export function assertModelAllowed(identity: Identity, model: string): void {
  if (mayCallModel(identity, model)) return;
  throw new ApiError('model_not_allowed', `this token may not call model "${model}"`, { param: 'model' });
}

/**
 * Which catalog entries an identity is shown (models, prices): an admin every one, callable or not;
 * a token those it can call now and may call.
 */
export const shownTo =
  (identity: Identity) =>
  (entry: CatalogEntry): boolean =>
    identity.kind === 'admin' || (entry.available && mayCallModel(identity, entry.model.id));
