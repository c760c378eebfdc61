/**
 * What the client does when the server process dies (a crash, an out-of-memory kill, SIGKILL).
 *
 * vscode-languageclient asks the client options' `errorHandler.closed()` after the connection closes.
 * We restart the server each time, up to RESTART_LIMIT times within RESTART_WINDOW_MS; past that, a
 * server that keeps dying is left stopped and the user is told how to start it again. Errors on the
 * connection (a bad message) never stop the client: the server answers them itself.
 *
 * The decision is a pure function of the exit times, so it is unit-tested without VS Code.
 */

export const RESTART_LIMIT = 5;
export const RESTART_WINDOW_MS = 3 * 60 * 1000;

export type RestartDecision = { restart: true; message: string } | { restart: false; message: string };

export class RestartBudget {
  private exits: number[] = [];

  constructor(
    private readonly limit: number = RESTART_LIMIT,
    private readonly windowMs: number = RESTART_WINDOW_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called once per server exit that nobody asked for. */
  onClosed(): RestartDecision {
    const now = this.now();
    this.exits = this.exits.filter((time) => now - time < this.windowMs);
    this.exits.push(now);
    if (this.exits.length > this.limit) {
      const minutes = Math.round(this.windowMs / 60000);
      return {
        restart: false,
        message: `the dcomplete server stopped ${this.exits.length} times in ${minutes} min; not restarting it (run "dcomplete: Restart server")`,
      };
    }
    return { restart: true, message: `the dcomplete server stopped; restarting it (${this.exits.length} of ${this.limit})` };
  }

  /** A manual restart starts a fresh budget. */
  reset(): void {
    this.exits = [];
  }
}
