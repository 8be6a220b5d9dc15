// Waiting for many informers' first lists at once. Each informer's own wait would add an abort
// listener to the caller's signal; a controller with a dozen watches then trips Node's
// MaxListenersExceededWarning (11 abort listeners on one AbortSignal). One listener serves all.
import type { WatchSource } from './informer.js';

/** Resolves once every informer has synced; rejects with the signal's reason if it aborts first. */
export async function waitForAllSynced(informers: readonly Pick<WatchSource, 'waitForSync'>[], signal?: AbortSignal): Promise<void> {
  const synced = Promise.all(informers.map((informer) => informer.waitForSync()));
  if (!signal) {
    await synced;
    return;
  }
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([synced, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
