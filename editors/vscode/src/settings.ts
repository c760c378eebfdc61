/**
 * Maps the `dcomplete.*` VS Code configuration onto the settings object the language server reads
 * under the `dcomplete` key of initializationOptions and workspace/didChangeConfiguration.
 * Kept free of the `vscode` module so it can be unit-tested under plain Node.
 */

export interface ServerSettings {
  model?: string;
  device?: string;
  engineUrl?: string;
  engineApiKey?: string;
  steps?: number;
  threshold?: number;
  block?: number;
  maxTokens?: number;
  debounceMs?: number;
  cacheMb?: number;
  suggestionCache?: number;
  multiline?: boolean;
  automaticUntil?: "statement" | "block";
  automaticMs?: number;
  context?: boolean;
  contextTokens?: number;
  contextFiles?: string[];
  languages?: string[];
  nextEdit?: NextEditServerSettings;
}

export type Aggressiveness = "low" | "medium" | "high";
export const AGGRESSIVENESS: readonly Aggressiveness[] = ["low", "medium", "high"];

/** The `nextEdit` settings the server reads. */
export interface NextEditServerSettings {
  enabled?: boolean;
  aggressiveness?: Aggressiveness;
}

/** `dcomplete.nextEdit.*`: the server's part, and the client's own wait after the last keystroke. */
export interface NextEditSettings {
  enabled: boolean;
  aggressiveness: Aggressiveness;
  debounceMs: number;
}

export const NEXT_EDIT_DEFAULTS: NextEditSettings = { enabled: true, aggressiveness: "medium", debounceMs: 500 };
const MAX_NEXT_EDIT_DEBOUNCE_MS = 5000;

/** Every language the server has a grammar for (package.json's default for `dcomplete.languages`; the server
 * announces the same list; tests/editors/test_vscode.py keeps the three equal). */
export const DEFAULT_LANGUAGES = ["python", "javascript", "javascriptreact", "typescript", "tsx", "typescriptreact", "java", "go", "rust", "c", "cpp", "csharp", "cs", "ruby", "php", "bash", "sh", "shellscript", "lua", "json", "jsonc", "yaml", "toml"];

/** Configuration keys (below `dcomplete.`) that are forwarded to the server unchanged in name. */
export const SERVER_SETTING_KEYS = [
  "model",
  "device",
  "engineUrl",
  "engineApiKey",
  "steps",
  "threshold",
  "block",
  "maxTokens",
  "debounceMs",
  "cacheMb",
  "suggestionCache",
  "multiline",
  "automaticUntil",
  "automaticMs",
  "context",
  "contextTokens",
  "contextFiles",
  "languages",
  "nextEdit",
] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];

/** Reads one configuration value; `get("model")` for `dcomplete.model`. */
export type ConfigReader = (key: string) => unknown;

/** steps 0 lets the confidence threshold alone decide; maxTokens must leave room for one token. */
const INTEGER_KEYS: ReadonlySet<string> = new Set([
  "steps",
  "block",
  "maxTokens",
  "debounceMs",
  "cacheMb",
  "suggestionCache",
  "automaticMs",
  "contextTokens",
]);

/**
 * Values that mean "let the server choose" (unset, null, empty string, "auto" device) are left out,
 * so the server's own defaults apply. A value of the wrong type is reported, never silently coerced.
 */
export function toServerSettings(read: ConfigReader): { settings: ServerSettings; problems: string[] } {
  const settings: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of SERVER_SETTING_KEYS) {
    const value = read(key);
    if (value === undefined || value === null || value === "") {
      continue;
    }
    const problem = checkValue(key, value);
    if (problem) {
      problems.push(problem);
      continue;
    }
    if (key === "device" && value === "auto") {
      continue;
    }
    if (key === "nextEdit") {
      const { enabled, aggressiveness } = nextEditSettings(value, problems);
      settings[key] = { enabled, aggressiveness };
      continue;
    }
    settings[key] = value;
  }
  return { settings: settings as ServerSettings, problems };
}

function checkValue(key: ServerSettingKey, value: unknown): string | undefined {
  switch (key) {
    case "model":
    case "device":
    case "engineUrl":
    case "engineApiKey":
      return typeof value === "string" ? undefined : `dcomplete.${key} must be a string, got ${show(value)}`;
    case "multiline":
    case "context":
      return typeof value === "boolean" ? undefined : `dcomplete.${key} must be true or false, got ${show(value)}`;
    case "automaticUntil":
      return value === "statement" || value === "block"
        ? undefined
        : `dcomplete.${key} must be "statement" or "block", got ${show(value)}`;
    case "languages":
      return isStringList(value) ? undefined : `dcomplete.${key} must be a list of language ids, got ${show(value)}`;
    case "contextFiles":
      return isStringList(value) ? undefined : `dcomplete.${key} must be a list of glob patterns, got ${show(value)}`;
    case "nextEdit":
      return typeof value === "object" && !Array.isArray(value)
        ? undefined
        : `dcomplete.${key} must be an object, got ${show(value)}`;
    case "threshold":
      return typeof value === "number" && value > 0 && value <= 1
        ? undefined
        : `dcomplete.${key} must be a number in (0, 1], got ${show(value)}`;
    default:
      if (INTEGER_KEYS.has(key)) {
        const min = key === "maxTokens" ? 1 : 0;
        return typeof value === "number" && Number.isInteger(value) && value >= min
          ? undefined
          : `dcomplete.${key} must be an integer >= ${min}, got ${show(value)}`;
      }
      return undefined;
  }
}

/**
 * `dcomplete.nextEdit` (VS Code hands the `nextEdit.*` settings over as one object). Each key is checked
 * on its own: a bad one is reported in `problems` and takes its default. `debounceMs` is the client's:
 * it waits that long after the last change before it asks (the server then answers at once).
 */
export function nextEditSettings(value: unknown, problems: string[] = []): NextEditSettings {
  const settings = { ...NEXT_EDIT_DEFAULTS };
  if (typeof value !== "object" || value === null) return settings;
  const raw = value as Record<string, unknown>;
  const bad = (key: string, want: string) => problems.push(`dcomplete.nextEdit.${key} must be ${want}, got ${show(raw[key])}`);
  if (raw.enabled !== undefined && raw.enabled !== null) {
    if (typeof raw.enabled === "boolean") settings.enabled = raw.enabled;
    else bad("enabled", "true or false");
  }
  if (raw.aggressiveness !== undefined && raw.aggressiveness !== null) {
    const level = AGGRESSIVENESS.find((name) => name === raw.aggressiveness);
    if (level) settings.aggressiveness = level;
    else bad("aggressiveness", `one of ${AGGRESSIVENESS.join(", ")}`);
  }
  if (raw.debounceMs !== undefined && raw.debounceMs !== null) {
    const ms = raw.debounceMs;
    if (typeof ms === "number" && Number.isInteger(ms) && ms >= 0 && ms <= MAX_NEXT_EDIT_DEBOUNCE_MS) settings.debounceMs = ms;
    else bad("debounceMs", `an integer from 0 to ${MAX_NEXT_EDIT_DEBOUNCE_MS}`);
  }
  return settings;
}

function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** The payload shape the server expects: settings nested under the `dcomplete` key. */
export function initializationOptions(settings: ServerSettings): { dcomplete: ServerSettings } {
  return { dcomplete: settings };
}

/** Whether a configuration change touches anything the server must hear about. */
export function affectsServerSettings(affects: (section: string) => boolean): boolean {
  return SERVER_SETTING_KEYS.some((key) => affects(`dcomplete.${key}`));
}

/** Whether a configuration change needs the server process restarted (its command line changed). */
export function affectsServerCommand(affects: (section: string) => boolean): boolean {
  return ["serverCommand", "pythonPath", "serverArgs"].some((key) => affects(`dcomplete.${key}`));
}
