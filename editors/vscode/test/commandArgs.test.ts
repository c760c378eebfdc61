import { strict as assert } from "node:assert";
import { test } from "node:test";
import { fillHolesArgs, missingInstruction, refactorArgs, regenerateArgs, wholeLineRange } from "../src/commandArgs";

const lengths = [10, 20, 30, 40];
const lineLength = (line: number) => lengths[line];
const pos = (line: number, character: number) => ({ line, character });

test("an empty selection is the cursor line", () => {
  assert.deepEqual(wholeLineRange({ start: pos(1, 4), end: pos(1, 4) }, lineLength), { start: pos(1, 0), end: pos(1, 20) });
});

test("a selection ending at column 0 leaves that line out", () => {
  assert.deepEqual(wholeLineRange({ start: pos(0, 3), end: pos(2, 0) }, lineLength), { start: pos(0, 0), end: pos(1, 20) });
});

test("a backwards selection covers the same lines", () => {
  assert.deepEqual(wholeLineRange({ start: pos(3, 5), end: pos(1, 2) }, lineLength), { start: pos(1, 0), end: pos(3, 40) });
});

test("an empty last line is kept by pointing past it", () => {
  const withEmpty = (line: number) => [10, 0, 5][line];
  assert.deepEqual(wholeLineRange({ start: pos(0, 0), end: pos(1, 0) }, withEmpty), { start: pos(0, 0), end: pos(0, 10) });
  assert.deepEqual(wholeLineRange({ start: pos(0, 0), end: pos(2, 0) }, withEmpty), { start: pos(0, 0), end: pos(2, 0) });
});

test("argument shapes match the server commands", () => {
  const range = { start: pos(0, 0), end: pos(0, 10) };
  assert.deepEqual(regenerateArgs("file:///a.py", range), [{ uri: "file:///a.py", range }]);
  assert.deepEqual(fillHolesArgs("file:///a.py"), [{ uri: "file:///a.py" }]);
  assert.deepEqual(refactorArgs("file:///a.py", range, "  rename x  "), [{ uri: "file:///a.py", range, instruction: "rename x" }]);
  assert.throws(() => refactorArgs("file:///a.py", range, "   "), /instruction is empty/);
});

test("a refactor code action without an instruction asks for one", () => {
  const range = { start: pos(0, 0), end: pos(0, 10) };
  const complete = missingInstruction("dcomplete.refactorSelection", [{ uri: "file:///a.py", range }]);
  assert.ok(complete);
  assert.deepEqual(complete(" use pathlib "), [{ uri: "file:///a.py", range, instruction: "use pathlib" }]);
  assert.equal(missingInstruction("dcomplete.refactorSelection", [{ uri: "u", range, instruction: "x" }]), undefined);
  assert.equal(missingInstruction("dcomplete.fillHoles", [{ uri: "u" }]), undefined);
});
