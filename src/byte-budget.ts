// A number of bytes handed out until it is spent: the webhook's bodies being read at once, the
// lines of a report GitHub bounds in bytes.

export class ByteBudget {
  private held = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes `bytes` if they fit in what is left. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limitBytes) return false;
    this.held += bytes;
    return true;
  }

  /** Gives back `bytes` taken before. */
  give(bytes: number): void {
    this.held -= bytes;
  }
}
