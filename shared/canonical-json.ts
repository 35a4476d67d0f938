/**
 * One text per JSON value, whatever order its object keys were written or stored in: keys sorted
 * (by UTF-16 code units) at every depth, no white space. PostgreSQL's `jsonb` gives objects back with
 * their keys reordered, so a hash over `JSON.stringify` would change on a round trip; a hash over
 * this does not. The value is written as JSON would keep it (`toJSON` applied, `undefined`, function
 * and symbol members dropped, in arrays `null`, non-finite numbers as `null`), in one pass: the log
 * sealer digests every event with it.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '') ?? 'null';
}

/** The canonical text of `value` found under `key`, or undefined where JSON leaves it out. */
function write(value: unknown, key: string): string | undefined {
  let v = value;
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      if (v === null) return 'null';
      if (v instanceof Number || v instanceof String || v instanceof Boolean) return JSON.stringify(v);
      return Array.isArray(v) ? writeArray(v) : writeObject(v as Record<string, unknown>);
    case 'bigint':
      return JSON.stringify(v); // throws, as JSON does
    default:
      return undefined; // undefined, a function, a symbol
  }
}

function writeArray(items: readonly unknown[]): string {
  let text = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) text += ',';
    text += write(items[i], String(i)) ?? 'null';
  }
  return `${text}]`;
}

function writeObject(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  if (!inOrder(keys)) keys.sort();
  let text = '{';
  for (const key of keys) {
    const member = write(record[key], key);
    if (member === undefined) continue;
    text += `${text.length === 1 ? '' : ','}${quoted(key)}:${member}`;
  }
  return `${text}}`;
}

/** Whether `keys` are already sorted: objects often come with their keys in order, and sorting allocates. */
function inOrder(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return false;
  return true;
}

/** Keys repeat from one event to the next: their JSON text is kept (a bounded number of them). */
const QUOTED_KEYS = new Map<string, string>();
const MOST_QUOTED_KEYS = 4_096;

function quoted(key: string): string {
  let text = QUOTED_KEYS.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    if (QUOTED_KEYS.size >= MOST_QUOTED_KEYS) QUOTED_KEYS.clear();
    QUOTED_KEYS.set(key, text);
  }
  return text;
}
