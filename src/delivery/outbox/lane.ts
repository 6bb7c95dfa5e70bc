/**
 * One lane of the dispatcher's work: one pass runs at a time, and an ask while it runs makes one more pass follow, so
 * that what came meanwhile is seen; asks are neither lost nor piled up. `idle` runs when the lane has no pass left.
 */
export class Lane {
  private running: Promise<void> | null = null;
  private wanted: boolean;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly options: { stopped: () => boolean; wanted?: boolean; idle?: () => void },
  ) {
    this.wanted = options.wanted ?? false;
  }

  /** Wants a pass without starting one: the lane's next ask, or askIfWanted, runs it. */
  want(): void {
    this.wanted = true;
  }

  ask(): void {
    this.wanted = true;
    if (this.options.stopped() || this.running) return;
    this.running = (async () => {
      while (this.wanted && !this.options.stopped()) {
        this.wanted = false;
        await this.pass();
      }
      this.options.idle?.();
    })().finally(() => {
      this.running = null;
    });
  }

  askIfWanted(): void {
    if (this.wanted) this.ask();
  }

  /** The pass under way, if any, and those it makes follow; never rejects (a pass handles its errors). */
  async settled(): Promise<void> {
    await this.running;
  }
}
