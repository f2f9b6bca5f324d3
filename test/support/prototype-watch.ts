/**
 * Watches the built-in prototypes of this process for the whole suite. The API and the worker of every
 * test service run in the test process, so a user key that reached Object.prototype (or Array's,
 * Function's, String's) anywhere in a request, an expression, a template, a secret or a response shows up
 * here, after the very test that did it. User JSON is data (core/user-json.ts).
 */
const WATCHED: [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['Number.prototype', Number.prototype],
  ['Boolean.prototype', Boolean.prototype],
  ['Promise.prototype', Promise.prototype],
  ['RegExp.prototype', RegExp.prototype],
  ['Error.prototype', Error.prototype],
];

type Snapshot = Map<string, Map<PropertyKey, PropertyDescriptor>>;

export function snapshotPrototypes(): Snapshot {
  return new Map(
    WATCHED.map(([name, proto]) => [
      name,
      new Map(Reflect.ownKeys(proto).map((key) => [key, Object.getOwnPropertyDescriptor(proto, key)!])),
    ]),
  );
}

/**
 * What changed on the watched prototypes since `before` ("Object.prototype.polluted added"), after
 * putting each back as it was, so that one finding does not fail every later test too.
 */
export function prototypeChanges(before: Snapshot): string[] {
  const changes: string[] = [];
  for (const [name, proto] of WATCHED) {
    const was = before.get(name)!;
    for (const key of Reflect.ownKeys(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, key)!;
      const earlier = was.get(key);
      if (!earlier) {
        changes.push(
          `${name}.${String(key)} added (${JSON.stringify(descriptor.value) ?? typeof descriptor.value})`,
        );
        Reflect.deleteProperty(proto, key);
      } else if (
        earlier.value !== descriptor.value ||
        earlier.get !== descriptor.get ||
        earlier.set !== descriptor.set
      ) {
        changes.push(`${name}.${String(key)} changed`);
        Object.defineProperty(proto, key, earlier);
      }
    }
    for (const key of was.keys()) {
      if (!Object.prototype.hasOwnProperty.call(proto, key)) {
        changes.push(`${name}.${String(key)} removed`);
        Object.defineProperty(proto, key, was.get(key)!);
      }
    }
  }
  return changes;
}
