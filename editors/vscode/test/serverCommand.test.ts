import { strict as assert } from "node:assert";
import { test } from "node:test";
import { LaunchConfigError, buildServerCommand, describeCommandLine } from "../src/serverCommand";

test("default is `dcomplete serve`", () => {
  assert.deepEqual(buildServerCommand({}), { command: "dcomplete", args: ["serve"] });
  assert.deepEqual(buildServerCommand({ serverCommand: "  ", pythonPath: "" }), { command: "dcomplete", args: ["serve"] });
});

test("a custom executable keeps the serve subcommand and appends extra args", () => {
  assert.deepEqual(buildServerCommand({ serverCommand: "/opt/dc/bin/dcomplete", serverArgs: ["--log-file", "x.log"] }), {
    command: "/opt/dc/bin/dcomplete",
    args: ["serve", "--log-file", "x.log"],
  });
});

test("pythonPath wins and runs the module", () => {
  assert.deepEqual(buildServerCommand({ serverCommand: "dcomplete", pythonPath: "/venv/bin/python" }), {
    command: "/venv/bin/python",
    args: ["-m", "lsp_server"],
  });
});

test("bad values name the setting", () => {
  assert.throws(() => buildServerCommand({ serverCommand: 3 }), LaunchConfigError);
  assert.throws(() => buildServerCommand({ serverArgs: "serve" }), /dcomplete\.serverArgs must be a list of strings/);
});

test("description quotes parts with spaces", () => {
  assert.equal(describeCommandLine({ command: "/my tools/python", args: ["-m", "lsp_server"] }), '"/my tools/python" -m lsp_server');
});
