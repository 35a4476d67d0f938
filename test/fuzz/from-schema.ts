import fc from 'fast-check';
import { id, jsonValue, PROTOTYPE_NAMES, text } from './arbitraries.ts';

/** The part of JSON Schema that zod's `toJSONSchema` writes for our inputs. */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
}

const ID_FIELD = /(^id$|_id$|Id$|^key$|^name$|^pluginName$|^path$|^channel$|^platform$|^model$)/;

/**
 * Inputs shaped like what a route expects, each value now and then replaced by a hostile one, so the
 * run reaches past validation into the handlers and the store instead of stopping at the first 400.
 */
export function fromSchema(
  schema: JsonSchema,
  knownIds: readonly string[],
  field = '',
): fc.Arbitrary<unknown> {
  const hostile = fc.oneof(text, jsonValue);
  const shaped = shapedBy(schema, knownIds, field);
  return fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 1, arbitrary: hostile });
}

function shapedBy(schema: JsonSchema, knownIds: readonly string[], field: string): fc.Arbitrary<unknown> {
  const options = schema.anyOf ?? schema.oneOf;
  if (options && options.length > 0) return fc.oneof(...options.map((o) => fromSchema(o, knownIds, field)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      if (ID_FIELD.test(field)) return id(knownIds);
      if (schema.pattern) {
        return fc.oneof(
          fc.stringMatching(new RegExp(schema.pattern), { maxLength: 30 }).filter((s) => s.length <= 200),
          text,
        );
      }
      return text;
    case 'integer':
    case 'number':
      return fc.oneof(
        fc.integer({
          min: Math.ceil(Math.max(schema.minimum ?? -1_000, -1_000_000)),
          max: Math.floor(Math.min(schema.maximum ?? 1_000, 1_000_000)),
        }),
        fc.constantFrom(-1, 0, 1.5, 1e300, Number.MAX_SAFE_INTEGER + 2),
      );
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? fromSchema(schema.items, knownIds, field) : jsonValue, { maxLength: 3 });
    case 'object':
      return objectOf(schema, knownIds);
    default:
      return jsonValue;
  }
}

function objectOf(schema: JsonSchema, knownIds: readonly string[]): fc.Arbitrary<unknown> {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return fc.dictionary(text, jsonValue, { maxKeys: 3 });
  const required = new Set(schema.required ?? []);
  const fields = Object.fromEntries(properties.map(([name, sub]) => [name, fromSchema(sub, knownIds, name)]));
  const requiredKeys = properties.map(([name]) => name).filter((name) => required.has(name));
  const record = fc.record(fields, { requiredKeys });
  // Now and then a key the route does not know, a prototype name among them.
  const extra = fc.option(fc.tuple(fc.constantFrom(...PROTOTYPE_NAMES, 'extra'), jsonValue), { freq: 5 });
  return fc.tuple(record, extra).map(([value, more]) => {
    if (!more) return value;
    const copy = { ...(value as Record<string, unknown>) };
    Object.defineProperty(copy, more[0], {
      value: more[1],
      enumerable: true,
      configurable: true,
      writable: true,
    });
    return copy;
  });
}
