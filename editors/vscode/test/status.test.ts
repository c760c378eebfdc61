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

test("a failure shows until a notification comes without it; an unreachable engine shows first", () => {
  const running = parseStatus({ model: "m", device: "cpu", lastLatencyMs: 80 });
  const failed = mergeStatus(running, parseStatus({ model: "m", device: "cpu", error: "the model failed (boom)" }));
  assert.equal(statusText("running", failed), "$(warning) dcomplete: model failed");
  assert.match(statusTooltip("running", failed), /error: the model failed \(boom\)/);
  const recovered = mergeStatus(failed, parseStatus({ model: "m", device: "cpu", lastLatencyMs: 90 }));
  assert.equal(recovered.error, undefined);
  assert.equal(statusText("running", recovered), "$(sparkle) m · cpu · 90 ms");
  const remote = mergeStatus(recovered, parseStatus({ engine: "unreachable", error: 3 }));
  assert.equal(statusText("running", remote), "$(debug-disconnect) dcomplete: engine unreachable");
  assert.equal(statusText("running", mergeStatus(remote, parseStatus({ engine: "connected" }))), "$(sparkle) m · cpu · 90 ms");
});

test("helpers", () => {
  assert.equal(shortModelName("org/Dream-Coder-7B"), "Dream-Coder-7B");
  assert.equal(shortModelName("C:\\models\\tiny"), "tiny");
  assert.equal(formatLatency(87.4), "87 ms");
});
