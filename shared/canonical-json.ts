/**
 * One text per JSON value, whatever order its object keys were written or stored in: keys sorted
 * (by UTF-16 code units) at every depth, no white space. PostgreSQL's `jsonb` gives objects back with
 * their keys reordered, so a hash over `JSON.stringify` would change on a round trip; a hash over
 * this does not. The value is first taken through JSON (`toJSON`, `undefined` members dropped,
 * non-finite numbers as `null`), exactly as a store that keeps JSON would keep it.
 */
export function canonicalJson(value: unknown): string {
  return write(JSON.parse(JSON.stringify(value) ?? 'null'));
}

function write(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(write).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${write(record[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}
