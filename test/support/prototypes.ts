/**
 * What the built-in prototypes of this process look like: their own property names and their
 * prototype, and the same for every function hanging off `Object.prototype` (a read model that
 * mistakes `toString` for a record writes onto `Object.prototype.toString`). Equal fingerprints
 * before and after a run mean no request changed the process for the others.
 */
export function prototypeFingerprint(): Record<string, string> {
  const targets: Record<string, object> = {
    'Object.prototype': Object.prototype,
    'Function.prototype': Function.prototype,
    'Array.prototype': Array.prototype,
    'String.prototype': String.prototype,
  };
  for (const name of Object.getOwnPropertyNames(Object.prototype)) {
    const value = Object.getOwnPropertyDescriptor(Object.prototype, name)?.value;
    if (typeof value === 'function') targets[`Object.prototype.${name}`] = value;
  }
  const fingerprint: Record<string, string> = {};
  for (const [name, target] of Object.entries(targets)) {
    const own = Reflect.ownKeys(target).map(String).sort().join(',');
    fingerprint[name] = `${own} | prototype: ${nameOf(Object.getPrototypeOf(target))}`;
  }
  return fingerprint;
}

function nameOf(prototype: unknown): string {
  if (prototype === null) return 'null';
  if (prototype === Object.prototype) return 'Object.prototype';
  if (prototype === Function.prototype) return 'Function.prototype';
  return 'another object';
}
