/** Builds the command line that starts the language server over stdio. */

export interface ServerLaunchConfig {
  serverCommand?: unknown;
  pythonPath?: unknown;
  serverArgs?: unknown;
}

export interface ServerCommandLine {
  command: string;
  args: string[];
}

export class LaunchConfigError extends Error {}

/**
 * `pythonPath` wins when set: `<python> -m lsp_server`, which works in any environment where the
 * package is importable even when its console script is not on PATH. Otherwise `<serverCommand> serve`.
 */
export function buildServerCommand(config: ServerLaunchConfig): ServerCommandLine {
  const extra = stringList(config.serverArgs, "dcomplete.serverArgs");
  const python = optionalString(config.pythonPath, "dcomplete.pythonPath");
  if (python) {
    return { command: python, args: ["-m", "lsp_server", ...extra] };
  }
  const command = optionalString(config.serverCommand, "dcomplete.serverCommand") ?? "dcomplete";
  return { command, args: ["serve", ...extra] };
}

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== "string") {
    throw new LaunchConfigError(`${name} must be a string, got ${JSON.stringify(value)}`);
  }
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function stringList(value: unknown, name: string): string[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new LaunchConfigError(`${name} must be a list of strings, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A shell-like rendering for logs and error messages. */
export function describeCommandLine(line: ServerCommandLine): string {
  return [line.command, ...line.args].map((part) => (/[\s"']/.test(part) ? JSON.stringify(part) : part)).join(" ");
}
