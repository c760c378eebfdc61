import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  NEXT_EDIT_DEFAULTS,
  affectsServerCommand,
  affectsServerSettings,
  initializationOptions,
  nextEditSettings,
  toServerSettings,
} from "../src/settings";

const reader = (values: Record<string, unknown>) => (key: string) => values[key];

test("defaults that mean 'server decides' are left out", () => {
  const { settings, problems } = toServerSettings(
    reader({ model: "", device: "auto", steps: null, threshold: null, multiline: true, languages: ["python"] }),
  );
  assert.deepEqual(settings, { multiline: true, languages: ["python"] });
  assert.deepEqual(problems, []);
});

test("every server setting is forwarded under its own name", () => {
  const values = {
    model: "/models/tiny",
    device: "cuda",
    engineUrl: "http://gpu-box:8765",
    engineApiKey: "secret",
    steps: 8,
    threshold: 0.85,
    block: 8,
    maxTokens: 64,
    debounceMs: 0,
    cacheMb: 64,
    suggestionCache: 16,
    multiline: false,
    context: false,
    contextTokens: 128,
    contextFiles: ["secrets/*"],
    languages: ["python", "lua"],
  };
  const { settings, problems } = toServerSettings(reader(values));
  assert.deepEqual(settings, values);
  assert.deepEqual(problems, []);
  assert.deepEqual(initializationOptions(settings), { dcomplete: values });
});

test("wrong types are reported by name and not forwarded", () => {
  const { settings, problems } = toServerSettings(
    reader({
      steps: 2.5, threshold: 0, maxTokens: "64", languages: "python", multiline: "yes", debounceMs: -1, engineUrl: 8765,
      context: "on", contextTokens: -1, contextFiles: "secrets/*",
    }),
  );
  assert.deepEqual(settings, {});
  assert.equal(problems.length, 10);
  assert.match(problems.join("\n"), /dcomplete\.contextTokens must be an integer >= 0, got -1/);
  assert.match(problems.join("\n"), /dcomplete\.contextFiles must be a list of glob patterns, got "secrets\/\*"/);
  assert.match(problems.join("\n"), /dcomplete\.engineUrl must be a string, got 8765/);
  assert.match(problems.join("\n"), /dcomplete\.steps must be an integer >= 0, got 2\.5/);
  assert.match(problems.join("\n"), /dcomplete\.threshold must be a number in \(0, 1\], got 0/);
  assert.match(problems.join("\n"), /dcomplete\.maxTokens .* got "64"/);
  assert.match(problems.join("\n"), /dcomplete\.debounceMs must be an integer >= 0, got -1/);
});

test("server command settings restart, model settings only notify", () => {
  const touched = (changed: string[]) => (section: string) => changed.includes(section);
  assert.equal(affectsServerCommand(touched(["dcomplete.pythonPath"])), true);
  assert.equal(affectsServerCommand(touched(["dcomplete.steps"])), false);
  assert.equal(affectsServerSettings(touched(["dcomplete.steps"])), true);
  assert.equal(affectsServerSettings(touched(["editor.fontSize"])), false);
});

test("next edit settings reach the server without the client's own wait", () => {
  const { settings, problems } = toServerSettings(reader({ nextEdit: { enabled: true, aggressiveness: "high", debounceMs: 300 } }));
  assert.deepEqual(settings, { nextEdit: { enabled: true, aggressiveness: "high" } });
  assert.deepEqual(problems, []);
  assert.deepEqual(nextEditSettings({ enabled: false, aggressiveness: "low", debounceMs: 0 }), {
    enabled: false,
    aggressiveness: "low",
    debounceMs: 0,
  });
  assert.deepEqual(nextEditSettings(undefined), NEXT_EDIT_DEFAULTS);
  assert.deepEqual(NEXT_EDIT_DEFAULTS, { enabled: true, aggressiveness: "medium", debounceMs: 500 });
});

test("a bad next edit setting is reported by name and takes its default, the others stay", () => {
  const { settings, problems } = toServerSettings(reader({ nextEdit: { enabled: "yes", aggressiveness: "high", debounceMs: 9000 } }));
  assert.deepEqual(settings, { nextEdit: { enabled: true, aggressiveness: "high" } });
  assert.deepEqual(problems, [
    'dcomplete.nextEdit.enabled must be true or false, got "yes"',
    "dcomplete.nextEdit.debounceMs must be an integer from 0 to 5000, got 9000",
  ]);
  const more: string[] = [];
  assert.deepEqual(nextEditSettings({ aggressiveness: "max", debounceMs: 9000 }, more), NEXT_EDIT_DEFAULTS);
  assert.deepEqual(more, [
    'dcomplete.nextEdit.aggressiveness must be one of low, medium, high, got "max"',
    "dcomplete.nextEdit.debounceMs must be an integer from 0 to 5000, got 9000",
  ]);
  assert.deepEqual(toServerSettings(reader({ nextEdit: "on" })).problems, ['dcomplete.nextEdit must be an object, got "on"']);
  const touched = (section: string) => section === "dcomplete.nextEdit";
  assert.equal(affectsServerSettings(touched), true);
});
