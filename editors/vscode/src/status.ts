/**
 * Status bar text for the `dcomplete/status` notification ({model, device, lastLatencyMs, error, engine}).
 * `error` comes only in the notification that reports a failure, so the next one without it clears it;
 * `engine` ("connected" / "unreachable") comes when the server uses a remote engine (`engineUrl`).
 */

export const STATUS_NOTIFICATION = "dcomplete/status";

export interface ServerStatus {
  model?: string;
  device?: string;
  lastLatencyMs?: number;
  error?: string;
  engine?: string;
}

export type ClientState = "starting" | "running" | "stopped" | "error";

/** Accepts only the fields it knows, with the right types; anything else is dropped. */
export function parseStatus(params: unknown): ServerStatus {
  const status: ServerStatus = {};
  if (typeof params !== "object" || params === null) {
    return status;
  }
  const raw = params as Record<string, unknown>;
  if (typeof raw.model === "string" && raw.model !== "") {
    status.model = raw.model;
  }
  if (typeof raw.device === "string" && raw.device !== "") {
    status.device = raw.device;
  }
  if (typeof raw.lastLatencyMs === "number" && Number.isFinite(raw.lastLatencyMs) && raw.lastLatencyMs >= 0) {
    status.lastLatencyMs = raw.lastLatencyMs;
  }
  if (typeof raw.error === "string" && raw.error !== "") {
    status.error = raw.error;
  }
  if (typeof raw.engine === "string" && raw.engine !== "") {
    status.engine = raw.engine;
  }
  return status;
}

/** Later notifications may carry only some fields: keep what is already known, except `error`, which
 * holds only while the notifications keep carrying it. */
export function mergeStatus(previous: ServerStatus, update: ServerStatus): ServerStatus {
  const merged = { ...previous, ...update };
  if (update.error === undefined) {
    delete merged.error;
  }
  return merged;
}

/** A short model name: the last path component of a folder or repo id. */
export function shortModelName(model: string): string {
  const parts = model.split(/[\\/]/).filter((part) => part !== "");
  return parts.length > 0 ? parts[parts.length - 1] : model;
}

export function formatLatency(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function statusText(state: ClientState, status: ServerStatus): string {
  const icon = state === "error" ? "$(error)" : state === "starting" ? "$(loading~spin)" : "$(sparkle)";
  if (state !== "running") {
    return `${icon} dcomplete: ${state}`;
  }
  if (status.engine === "unreachable") {
    return "$(debug-disconnect) dcomplete: engine unreachable";
  }
  if (status.error !== undefined) {
    return "$(warning) dcomplete: model failed";
  }
  const parts = [status.model ? shortModelName(status.model) : undefined, status.device];
  if (status.lastLatencyMs !== undefined) {
    parts.push(formatLatency(status.lastLatencyMs));
  }
  const details = parts.filter((part): part is string => part !== undefined);
  return details.length > 0 ? `${icon} ${details.join(" · ")}` : `${icon} dcomplete`;
}

export function statusTooltip(state: ClientState, status: ServerStatus): string {
  const lines = [`dcomplete server: ${state}`];
  if (status.model) lines.push(`model: ${status.model}`);
  if (status.device) lines.push(`device: ${status.device}`);
  if (status.lastLatencyMs !== undefined) lines.push(`last completion: ${formatLatency(status.lastLatencyMs)}`);
  if (status.engine) lines.push(`engine: ${status.engine}`);
  if (status.error) lines.push(`error: ${status.error}`);
  return lines.join("\n");
}
