import { ApiError } from '../../shared/errors.ts';
import type { EnvRequirement } from '../../shared/http/action.ts';
import type { EnvLookup, Modality, ModelDefinition, Provider } from './providers/types.ts';

export interface CatalogEntry {
  model: ModelDefinition;
  provider: Provider;
  envRequirements: readonly EnvRequirement[];
  missingEnv: string[];
  /** Programs the model runs on this machine that are not installed. */
  missingPrograms: readonly string[];
  available: boolean;
}

/** The entries as computed once, and every env value that computation read. */
/** No connections: one array, so the catalog sees no change. */
const NO_PROVIDERS: readonly Provider[] = [];

interface Computed {
  entries: readonly CatalogEntry[];
  byId: Map<string, CatalogEntry>;
  reads: Map<string, string | undefined>;
  /** The connections' providers it was made with. */
  connected: readonly Provider[];
}

/**
 * The models registered in code, and which can be called now. It follows the env read model: `env
 * upsert` of a key makes its models appear at once and `env remove` makes them disappear, with no
 * restart.
 *
 * The entries are computed once and kept for as long as every env value their computation read is
 * unchanged (providers' `models` depend on env only). Comparing the values read, rather than a
 * version of the env read model, also catches a change of the process environment, which an
 * EnvLookup falls back to and which has no version.
 */
export class Catalog {
  #computed: Computed | undefined;

  /**
   * `connected`: the providers of the connections admins made, after the built-in ones; the catalog
   * is made again whenever it answers another list (a connection set or removed).
   */
  constructor(
    private readonly providers: readonly Provider[],
    private readonly env: EnvLookup,
    private readonly connected: () => readonly Provider[] = () => NO_PROVIDERS,
  ) {}

  /** The ids of the built-in providers: their model ids begin with one and a slash. */
  providerIds(): string[] {
    return this.providers.map((p) => p.id);
  }

  entries(): readonly CatalogEntry[] {
    return this.#current().entries;
  }

  /** Every entry by its id, callable or not. */
  byId(): ReadonlyMap<string, CatalogEntry> {
    return this.#current().byId;
  }

  /**
   * The callable model with this id and modality, or 404 `model_not_found` saying what to fix: the
   * env keys to set or the programs to install for a model of the catalog that cannot be called now.
   */
  resolve(id: string, modality: Modality): CatalogEntry {
    const entry = this.#current().byId.get(id);
    if (!entry) throw new ApiError('model_not_found', `model "${id}" does not exist`, { param: 'model' });
    if (!entry.available) {
      const fixes = [
        ...entry.missingEnv.map((key) => `set ${key} (env upsert, or the process environment)`),
        ...entry.missingPrograms.map((program) => `install ${program}`),
      ];
      throw new ApiError(
        'model_not_found',
        `model "${id}" cannot be called now: ${fixes.length > 0 ? fixes.join('; ') : 'its provider is not configured'}`,
        { param: 'model' },
      );
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

  #current(): Computed {
    const computed = this.#computed;
    if (computed && computed.connected === this.connected() && this.#unchanged(computed.reads))
      return computed;
    this.#computed = this.#compute();
    return this.#computed;
  }

  #unchanged(reads: Map<string, string | undefined>): boolean {
    for (const [key, value] of reads) if (this.env.get(key) !== value) return false;
    return true;
  }

  #compute(): Computed {
    const reads = new Map<string, string | undefined>();
    const env: EnvLookup = {
      get: (key) => {
        const value = this.env.get(key);
        reads.set(key, value);
        return value;
      },
    };
    const connected = this.connected();
    const entries = [...this.providers, ...connected].flatMap((provider) => {
      const missingEnv = provider.env.filter((e) => e.required && !env.get(e.key)).map((e) => e.key);
      return provider.models(env).map((model) => {
        const missingPrograms = provider.missingPrograms?.(model) ?? [];
        return {
          model,
          provider,
          envRequirements: provider.env,
          missingEnv,
          missingPrograms,
          available: missingEnv.length === 0 && missingPrograms.length === 0,
        };
      });
    });
    const byId = new Map<string, CatalogEntry>();
    // The first entry with an id wins, as a search of the list would find it.
    for (const entry of entries) if (!byId.has(entry.model.id)) byId.set(entry.model.id, entry);
    return { entries, byId, reads, connected };
  }
}
