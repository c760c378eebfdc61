import { strict as assert } from "node:assert";
import { test } from "node:test";
import { formatLatency, mergeStatus, parseStatus, shortModelName, statusText, statusTooltip } from "../src/status";

test("parseStatus keeps typed fields only", () => {
  assert.deepEqual(parseStatus({ model: "m", device: "cpu", lastLatencyMs: 12.5, extra: 1 }), {
    model: "m",
    device: "cpu",
    lastLatencyMs: 12.5,
  });
  assert.deepEqual(parseStatus({ model: 3, lastLatencyMs: "fast" }), {});
  assert.deepEqual(parseStatus(null), {});
  assert.deepEqual(parseStatus({ lastLatencyMs: -1 }), {});
});

test("partial updates keep earlier fields", () => {
  const first = parseStatus({ model: "/ckpt/dream-tiny", device: "cpu" });
  assert.deepEqual(mergeStatus(first, parseStatus({ lastLatencyMs: 80 })), {
    model: "/ckpt/dream-tiny",
    device: "cpu",
    lastLatencyMs: 80,
  });
});

test("status text shows model, device and latency while running", () => {
  const status = { model: "/ckpt/dream-tiny/", device: "cuda", lastLatencyMs: 1234 };
  assert.equal(statusText("running", status), "$(sparkle) dream-tiny · cuda · 1.2 s");
  assert.equal(statusText("running", {}), "$(sparkle) dcomplete");
  assert.equal(statusText("starting", status), "$(loading~spin) dcomplete: starting");
  assert.equal(statusText("error", {}), "$(error) dcomplete: error");
  assert.match(statusTooltip("running", status), /model: \/ckpt\/dream-tiny\/\ndevice: cuda\nlast completion: 1\.2 s/);
});

test("helpers", () => {
  assert.equal(shortModelName("org/Dream-Coder-7B"), "Dream-Coder-7B");
  assert.equal(shortModelName("C:\\models\\tiny"), "tiny");
  assert.equal(formatLatency(87.4), "87 ms");
});
