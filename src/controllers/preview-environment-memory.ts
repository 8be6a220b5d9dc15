// What this process remembers of each environment between its reconciles, in one place so that
// one `forget` drops all of it: the last rendering (so an unchanged environment is not rendered
// again), what was last pruned and applied in full (so neither is repeated, and guards can be
// put back as applied), a refusal by the API server (not dry-run again at once), the object as
// last written (until the informer shows the write), since when a SHA deploys unreported, since
// when its namespace has been seen going, and the slot it was admitted to. None of it
// is needed for correctness after a restart: each entry is a cache of something the next
// reconcile would otherwise redo.
import type { KubeObject } from '../kube/index.js';
import type { RenderOutcome } from './preview-environment-rendering.js';
import { SlotLedger } from './preview-environment-slots.js';
import type { EnvironmentObject, Failure } from './preview-environment-status.js';

/** A rendering applied in full: its Namespace and objects as applied (the guards among them are repaired from here). */
export interface AppliedRendering {
  key: string;
  namespace: KubeObject;
  objects: readonly KubeObject[];
}

/** What is remembered of one environment; every field is absent until it is first known. */
export interface Remembered {
  /** The last rendering, keyed by uid, generation, head SHA and TLS mode. */
  render?: { key: string; outcome: RenderOutcome };
  /** The render key whose leftovers were last pruned. */
  prunedKey?: string;
  /** The rendering last applied in full (or, after a restart, the guards of the deployed commit): a new one is dry-run first. */
  applied?: AppliedRendering;
  /** The deployed SHA whose guards were learnt from its rendering after a restart (tried once per SHA). */
  servedGuardsOf?: string;
  /** A rendering the API server refused, by render key: not dry-run again before the recheck interval. */
  refusal?: { key: string; failure: Failure; at: number };
  /** The object as this controller last wrote it, until the informer has caught up with the write. */
  written?: EnvironmentObject;
  /** A SHA applied but neither Ready nor written as Deploying yet, and since when (its report waits a little). */
  deploying?: { sha: string; since: number };
  /** The namespace (by uid) this process has seen being deleted, and since when by its own clock (its polls back off). */
  namespaceGoing?: { uid: string; since: number };
}

export class EnvironmentMemory {
  /** Admissions under the per-repository cap. */
  readonly slots = new SlotLedger();
  private readonly entries = new Map<string, Remembered>();

  /** What is remembered of `name`, to read and to update; kept until `forget(name)`. */
  of(name: string): Remembered {
    let entry = this.entries.get(name);
    if (!entry) {
      entry = {};
      this.entries.set(name, entry);
    }
    return entry;
  }

  /** What is remembered of `name`, without starting a record for a name never reconciled (a label on any object). */
  peek(name: string): Readonly<Remembered> | undefined {
    return this.entries.get(name);
  }

  /** The environment is gone, or torn down: all of it goes, and its slot is free. */
  forget(name: string): void {
    this.entries.delete(name);
    this.slots.release(name);
  }
}
