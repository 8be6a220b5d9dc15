// Mutual exclusion per key (here: per cached repository). Entries exist only while the key
// is held or awaited, so the map does not grow with every repository ever seen.
import { Semaphore } from '../kube/semaphore.js';

export class KeyedLock {
  private readonly locks = new Map<string, { semaphore: Semaphore; users: number }>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let entry = this.locks.get(key);
    if (!entry) {
      entry = { semaphore: new Semaphore(1), users: 0 };
      this.locks.set(key, entry);
    }
    entry.users += 1;
    try {
      return await entry.semaphore.run(task);
    } finally {
      entry.users -= 1;
      if (entry.users === 0) this.locks.delete(key);
    }
  }

  /** Keys held or awaited right now. */
  get size(): number {
    return this.locks.size;
  }
}
