import { describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { EnvLookup, ModelDefinition, Provider } from './providers/types.ts';

const model = (name: string): ModelDefinition => ({
  id: `test/${name}`,
  name,
  description: name,
  modalities: ['chat'],
  tags: [],
  meta: {},
  upstreamModel: name,
});

/** A provider whose models are the names in TEST_MODELS; counts how often they are computed. */
function testProvider() {
  const calls = { models: 0 };
  const provider: Provider = {
    id: 'test',
    name: 'Test',
    env: [
      { key: 'TEST_KEY', description: 'key', required: true },
      { key: 'TEST_MODELS', description: 'names', required: false },
    ],
    models(env) {
      calls.models++;
      return (env.get('TEST_MODELS') ?? 'a').split(',').map(model);
    },
  };
  return { provider, calls };
}

/** Env the way the gateway reads it: values set in the store over the process environment. */
function layeredEnv(processEnv: NodeJS.ProcessEnv) {
  const store = new Map<string, string>();
  const env: EnvLookup = { get: (key) => store.get(key) ?? (processEnv[key] || undefined) };
  return { env, store };
}

describe('Catalog', () => {
  it('resolve does not recompute the entries while nothing they read changed', () => {
    const { provider, calls } = testProvider();
    const { env } = layeredEnv({ TEST_KEY: 'k', UNRELATED: 'x' });
    const catalog = new Catalog([provider], env);

    expect(catalog.resolve('test/a', 'chat').model.id).toBe('test/a');
    expect(catalog.resolve('test/a', 'chat').model.id).toBe('test/a');
    expect(catalog.entries().map((e) => e.model.id)).toEqual(['test/a']);
    expect(calls.models).toBe(1);
  });

  it('recomputes after a change of the store env, at once', () => {
    const { provider, calls } = testProvider();
    const { env, store } = layeredEnv({});
    const catalog = new Catalog([provider], env);
    // What to fix is named: the key its provider needs.
    expect(() => catalog.resolve('test/a', 'chat')).toThrow(/cannot be called now: set TEST_KEY/);

    store.set('TEST_KEY', 'k'); // env upsert
    expect(catalog.resolve('test/a', 'chat').available).toBe(true);
    store.set('TEST_MODELS', 'b,c');
    expect(() => catalog.resolve('test/a', 'chat')).toThrow(/does not exist/);
    expect(catalog.resolve('test/c', 'chat').model.name).toBe('c');
    store.delete('TEST_KEY'); // env remove
    expect(() => catalog.resolve('test/c', 'chat')).toThrow(/cannot be called now/);
    expect(catalog.entries()[0]).toMatchObject({ available: false, missingEnv: ['TEST_KEY'] });
    expect(calls.models).toBe(4);
  });

  it('recomputes after a change of the process environment it read', () => {
    const { provider, calls } = testProvider();
    const processEnv: NodeJS.ProcessEnv = { TEST_KEY: 'k' };
    const catalog = new Catalog([provider], layeredEnv(processEnv).env);
    expect(catalog.resolve('test/a', 'chat').available).toBe(true);

    processEnv.UNRELATED = 'x'; // not read by any provider: nothing to recompute
    catalog.resolve('test/a', 'chat');
    expect(calls.models).toBe(1);

    processEnv.TEST_MODELS = 'z';
    expect(catalog.resolve('test/z', 'chat').model.id).toBe('test/z');
    delete processEnv.TEST_KEY;
    expect(() => catalog.resolve('test/z', 'chat')).toThrow(/cannot be called now/);
    expect(calls.models).toBe(3);
  });

  it('a model without the modality asked for is not found', () => {
    const { provider } = testProvider();
    const catalog = new Catalog([provider], layeredEnv({ TEST_KEY: 'k' }).env);
    expect(() => catalog.resolve('test/a', 'image')).toThrow(/does not support image \(it supports chat\)/);
  });
});
