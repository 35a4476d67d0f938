import type { Identity } from '../../../shared/http/identity.ts';

/** Refuses a model the identity may not call (403 `model_not_allowed`). Every identity may call every model for now. */
export function assertModelAllowed(_identity: Identity, _model: string): void {}
