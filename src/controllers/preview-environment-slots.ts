// The per-repository cap: which environments of a repository may deploy and which wait as
// Queued, in pull-request-number order (src/policy/budgets.ts decides; this keeps the facts).
// An environment holds a slot from the moment it is admitted until its PreviewEnvironment is
// gone: its status or its standing namespace says so once written, and until the informer shows
// that, this process remembers its own admissions — so two workers never hand out the same free slot.
import { allocateSlots } from '../policy/budgets.js';

/** What the slot decision needs to know of each environment of the repository. */
export interface SlotEnvironment {
  name: string;
  pullRequest: number;
  phase?: string;
  deleting: boolean;
  /**
   * Its own namespace, if the cache shows one. Standing, it holds a slot whatever the status says
   * yet (one applied whose first status was held back when this process restarted). Going, it
   * holds the slot for the others until it is gone (an Expired environment's, say), but gives its
   * own environment, asking again after a push, no place ahead of those waiting.
   */
  namespace?: 'standing' | 'going';
}

// Expired is torn down (its object stays so the expiry sticks): only its namespace, until gone, holds a slot.
const holdingPhases = new Set(['Pending', 'Deploying', 'Ready', 'Failed', 'Terminating']);

export type SlotDecision = { admitted: true } | { admitted: false; position: number; cap: number };

export class SlotLedger {
  private readonly admitted = new Set<string>();

  /**
   * Admits `name` if the cap allows it (remembering the admission) or says where it waits.
   * Synchronous: in one process, no two decisions interleave.
   */
  decide(name: string, environments: readonly SlotEnvironment[], cap: number | null): SlotDecision {
    if (this.admitted.has(name) || cap === null) {
      this.admitted.add(name);
      return { admitted: true };
    }
    const self = environments.find((e) => e.name === name);
    if (!self) throw new Error(`environment ${name} is not among the repository's environments`);
    const held = (e: SlotEnvironment) => this.admitted.has(e.name) || e.deleting || holdingPhases.has(e.phase ?? '');
    const holds = (e: SlotEnvironment) => held(e) || e.namespace === 'standing' || (e !== self && e.namespace === 'going');
    if (holds(self)) {
      this.admitted.add(name);
      return { admitted: true };
    }
    // An Expired environment waits for no slot (only a push deploys it again, and then it asks for
    // itself): as a candidate, its lower number would take the free slot from those Queued.
    const candidates = environments.filter((e) => e === self || e.phase !== 'Expired' || holds(e));
    // Numbers identify environments here; a repository has one environment per pull request.
    const allocation = allocateSlots(
      candidates.map((e) => ({ number: e.pullRequest, holdsSlot: holds(e) })),
      cap,
    );
    if (allocation.deploy.includes(self.pullRequest)) {
      this.admitted.add(name);
      return { admitted: true };
    }
    return { admitted: false, position: allocation.queued.indexOf(self.pullRequest) + 1, cap };
  }

  /** Admitted by this process (it holds a slot, whatever its status says yet). */
  holds(name: string): boolean {
    return this.admitted.has(name);
  }

  /** The environment is gone (or leaving): its slot is free once its object is. */
  release(name: string): void {
    this.admitted.delete(name);
  }
}
