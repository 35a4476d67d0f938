import { ApiError } from '../../shared/errors.ts';
import type { EnvRequirement } from '../../shared/http/action.ts';
import type { EnvLookup, Modality, ModelDefinition, Provider } from './providers/types.ts';

export interface CatalogEntry {
  model: ModelDefinition;
  provider: Provider;
  envRequirements: readonly EnvRequirement[];
  missingEnv: string[];
  available: boolean;
}

/**
 * The models registered in code, and which can be called now. It is computed from the env read
 * model on each call, so `env upsert` of a key makes its models appear at once and `env remove`
 * makes them disappear, with no restart and no cache to invalidate.
 */
export class Catalog {
  constructor(
    private readonly providers: readonly Provider[],
    private readonly env: EnvLookup,
  ) {}

  entries(): CatalogEntry[] {
    return this.providers.flatMap((provider) => {
      const missingEnv = provider.env.filter((e) => e.required && !this.env.get(e.key)).map((e) => e.key);
      return provider.models(this.env).map((model) => ({
        model,
        provider,
        envRequirements: provider.env,
        missingEnv,
        available: missingEnv.length === 0,
      }));
    });
  }

  /** The callable model with this id and modality, or 404 `model_not_found`. */
  resolve(id: string, modality: Modality): CatalogEntry {
    const entry = this.entries().find((e) => e.model.id === id);
    if (!entry?.available) {
      throw new ApiError('model_not_found', `model "${id}" does not exist or cannot be called now`, {
        param: 'model',
      });
    }
    if (!entry.model.modalities.includes(modality)) {
      throw new ApiError(
        'model_not_found',
        `model "${id}" does not support ${modality} (it supports ${entry.model.modalities.join(', ')})`,
        { param: 'model' },
      );
    }
    return entry;
  }
}
