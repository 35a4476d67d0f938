import { takeTurn } from './turns.ts';

/**
 * The text of `JSON.stringify(value)`, as parts to be joined or written in order, made over several
 * turns of the event loop (`takeTurn`): a long array is serialized `perTurn` elements at a time, so
 * a snapshot of thousands of records does not hold every other request for tens of milliseconds,
 * and a writer that takes the parts one by one never holds the whole text as one string. For plain
 * JSON data (objects, arrays, strings, numbers, booleans, null), which must not change until the
 * promise settles: a caller passes values nothing mutates (copied arrays of records never changed
 * once made).
 */
export async function stringifyInTurns(value: unknown, perTurn = 500): Promise<string[]> {
  const parts: string[] = [];
  await write(value, parts, perTurn);
  return parts;
}

async function write(value: unknown, parts: string[], perTurn: number): Promise<void> {
  if (Array.isArray(value) && value.length > perTurn) {
    for (let start = 0; start < value.length; start += perTurn) {
      if (start > 0) await takeTurn();
      const slice = JSON.stringify(value.slice(start, start + perTurn));
      // `[a,b` for the first slice, `,c,d` for the others, then `]`.
      parts.push(start === 0 ? slice.slice(0, -1) : `,${slice.slice(1, -1)}`);
    }
    parts.push(']');
    return;
  }
  if (isPlainObject(value)) {
    let separator = '{';
    for (const [key, member] of Object.entries(value)) {
      // As JSON.stringify: a member it cannot write is left out.
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
      parts.push(`${separator}${JSON.stringify(key)}:`);
      separator = ',';
      await write(member, parts, perTurn);
    }
    parts.push(separator === '{' ? '{}' : '}');
    return;
  }
  parts.push(JSON.stringify(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !('toJSON' in value);
}
