import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAction, defineService, noInput } from './action.ts';
import { ActionRegistry } from './registry.ts';

const action = (name: string, method: 'GET' | 'POST' = 'GET') =>
  defineAction({ service: 's', action: name, method, input: noInput, handler: () => ({ name }) });

const registry = new ActionRegistry().register(
  defineService({
    id: 's',
    name: 'S',
    env: [],
    actions: [
      action('things', 'POST'),
      action('things/:id'),
      action('things/latest'),
      action('things/:id/parts'),
      { ...action('other/:a/:b'), params: z.object({ a: z.string(), b: z.string() }) },
    ],
  }),
);

const found = (method: string, name: string) => {
  const resolution = registry.resolve(method, 's', name);
  if (resolution.kind !== 'found') return resolution;
  return { name: resolution.action.action, params: resolution.params };
};

describe('action registry', () => {
  it('finds an action by its exact name, with no params', () => {
    expect(found('POST', 'things')).toEqual({ name: 'things', params: {} });
  });

  it('a `:param` segment takes any one segment of the path, and names it', () => {
    expect(found('GET', 'things/resp_1')).toEqual({ name: 'things/:id', params: { id: 'resp_1' } });
    expect(found('GET', 'things/resp_1/parts')).toEqual({
      name: 'things/:id/parts',
      params: { id: 'resp_1' },
    });
    expect(found('GET', 'other/x/y')).toEqual({ name: 'other/:a/:b', params: { a: 'x', b: 'y' } });
  });

  it('an exact name wins over a pattern', () => {
    expect(found('GET', 'things/latest')).toEqual({ name: 'things/latest', params: {} });
  });

  it('an empty segment, a segment too many or too few is no match', () => {
    for (const name of ['things/', 'things/a/b', 'other/x', 'things/a/parts/more'])
      expect(found('GET', name)).toEqual({ kind: 'not_found', what: 'action' });
  });

  it('a pattern with another method is 405 naming the methods it has', () => {
    expect(found('POST', 'things/resp_1')).toEqual({ kind: 'method_not_allowed', allowed: ['GET'] });
    expect(found('HEAD', 'things/resp_1')).toMatchObject({ name: 'things/:id' });
  });
});
