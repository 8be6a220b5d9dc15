// Makes a value read-only all the way down, so that one shared copy cannot be changed by any of
// the callers it is handed to (the kept preview.yaml configurations).

/** Freezes `value` and everything it reaches; an object is frozen before its children, so one met again (an alias) ends the walk. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}
