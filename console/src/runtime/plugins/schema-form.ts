/**
 * A form for a plugin action, from the JSON Schema of its input (what `/api/ui/plugins` describes):
 * one field per property; what the schema does not describe simply is a JSON field.
 */
export interface SchemaField {
  name: string;
  kind: 'text' | 'long-text' | 'number' | 'integer' | 'boolean' | 'choice' | 'json';
  required: boolean;
  description?: string;
  choices?: string[];
}

interface JsonSchema {
  type?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: unknown;
  description?: unknown;
  enum?: unknown;
  maxLength?: unknown;
}

/** A string longer than this gets a text area. */
const LONG_TEXT = 2000;

/** The fields of an object schema; `undefined` when it is not one (the whole payload is then JSON). */
export function fieldsOf(schema: unknown): SchemaField[] | undefined {
  const s = schema as JsonSchema | undefined;
  if (s?.type !== 'object' || typeof s.properties !== 'object' || s.properties === null) return undefined;
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  return Object.entries(s.properties).map(([name, property]) => ({
    name,
    required: required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    ...kindOf(property),
  }));
}

function kindOf(property: JsonSchema): Pick<SchemaField, 'kind' | 'choices'> {
  if (Array.isArray(property.enum) && property.enum.every((v) => typeof v === 'string'))
    return { kind: 'choice', choices: property.enum as string[] };
  switch (property.type) {
    case 'string':
      return {
        kind:
          typeof property.maxLength === 'number' && property.maxLength <= LONG_TEXT ? 'text' : 'long-text',
      };
    case 'number':
      return { kind: 'number' };
    case 'integer':
      return { kind: 'integer' };
    case 'boolean':
      return { kind: 'boolean' };
    default:
      return { kind: 'json' };
  }
}

/** The payload the form's values stand for: empty optional fields are left out. Throws on bad JSON. */
export function payloadOf(fields: SchemaField[] | undefined, values: FormData): Record<string, unknown> {
  if (!fields) {
    const whole = parseJson('payload', String(values.get('payload') ?? '').trim() || '{}');
    if (typeof whole !== 'object' || whole === null || Array.isArray(whole))
      throw new Error('payload must be a JSON object');
    return whole as Record<string, unknown>;
  }
  const payload: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.kind === 'boolean') {
      const checked = values.get(field.name) === 'on';
      if (checked || field.required) payload[field.name] = checked;
      continue;
    }
    const raw = String(values.get(field.name) ?? '');
    if (raw.trim() === '' && !field.required) continue;
    if (field.kind === 'number' || field.kind === 'integer') payload[field.name] = Number(raw);
    else if (field.kind === 'json') payload[field.name] = parseJson(field.name, raw);
    else payload[field.name] = raw;
  }
  return payload;
}

function parseJson(name: string, raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new Error(`${name} is not valid JSON`);
  }
}
