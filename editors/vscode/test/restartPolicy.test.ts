import { strict as assert } from "node:assert";
import { test } from "node:test";
import { RESTART_LIMIT, RestartBudget } from "../src/restartPolicy";

test("a dead server is restarted up to the limit, then left stopped", () => {
  let clock = 0;
  const budget = new RestartBudget(RESTART_LIMIT, 180_000, () => clock);
  for (let i = 0; i < RESTART_LIMIT; i++) {
    clock += 1000;
    assert.equal(budget.onClosed().restart, true);
  }
  clock += 1000;
  const refused = budget.onClosed();
  assert.equal(refused.restart, false);
  assert.match(refused.message, /not restarting/);
});

test("exits older than the window no longer count", () => {
  let clock = 0;
  const budget = new RestartBudget(2, 60_000, () => clock);
  assert.equal(budget.onClosed().restart, true);
  assert.equal(budget.onClosed().restart, true);
  clock += 61_000;
  assert.equal(budget.onClosed().restart, true);
});

test("a manual restart resets the budget", () => {
  const budget = new RestartBudget(1, 60_000, () => 0);
  assert.equal(budget.onClosed().restart, true);
  assert.equal(budget.onClosed().restart, false);
  budget.reset();
  assert.equal(budget.onClosed().restart, true);
});
