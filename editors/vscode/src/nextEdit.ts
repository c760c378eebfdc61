/**
 * Next edits without the editor: the `textDocument/copilotInlineEdit` request and its answer, what the
 * editor draws for an edit (the part that is replaced, struck through, and the new text after it), and
 * what Tab does (jump to the edit, or apply it once the cursor is there). Positions are LSP positions
 * (0-based line, UTF-16 character), which are VS Code's too. Kept free of the `vscode` module so it can
 * be unit-tested under plain Node; src/nextEditController.ts does the editor's part.
 */
import { LspPosition, LspRange } from "./commandArgs";

export const INLINE_EDIT_REQUEST = "textDocument/copilotInlineEdit";
export const DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit";
/** `context.triggerKind` of a request the client makes on its own (2 = automatic in Copilot's protocol). */
const AUTOMATIC_TRIGGER = 2;

export interface ServerCommand {
  title: string;
  command: string;
  arguments: unknown[];
}

/** One edit the server suggests: replace `range` of the document (`uri` at `version`) with `text`. */
export interface NextEdit {
  uri: string;
  version: number;
  range: LspRange;
  text: string;
  command?: ServerCommand;
}

export interface InlineEditParams {
  textDocument: { uri: string; version: number };
  position: LspPosition;
  context: { triggerKind: number };
}

export function inlineEditParams(uri: string, version: number, position: LspPosition): InlineEditParams {
  return {
    textDocument: { uri, version },
    position: { line: position.line, character: position.character },
    context: { triggerKind: AUTOMATIC_TRIGGER },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function parsePosition(value: unknown): LspPosition | undefined {
  if (!isObject(value) || !isCount(value.line) || !isCount(value.character)) return undefined;
  return { line: value.line, character: value.character };
}

export function comparePositions(a: LspPosition, b: LspPosition): number {
  return a.line !== b.line ? a.line - b.line : a.character - b.character;
}

function parseRange(value: unknown): LspRange | undefined {
  if (!isObject(value)) return undefined;
  const start = parsePosition(value.start);
  const end = parsePosition(value.end);
  return start && end && comparePositions(start, end) <= 0 ? { start, end } : undefined;
}

function parseCommand(value: unknown): ServerCommand | undefined {
  if (!isObject(value) || typeof value.command !== "string" || value.command === "") return undefined;
  return {
    title: typeof value.title === "string" ? value.title : "",
    command: value.command,
    arguments: Array.isArray(value.arguments) ? value.arguments : [],
  };
}

/**
 * The edit to show from a `copilotInlineEdit` result: the first well-formed entry of `edits` (they are
 * alternatives, best first). Entries of another shape are skipped; undefined when none is left.
 */
export function parseInlineEdits(result: unknown): NextEdit | undefined {
  if (!isObject(result) || !Array.isArray(result.edits)) return undefined;
  for (const entry of result.edits) {
    if (!isObject(entry) || typeof entry.text !== "string" || !isObject(entry.textDocument)) continue;
    const { uri, version } = entry.textDocument;
    const range = parseRange(entry.range);
    if (typeof uri !== "string" || !isCount(version) || !range) continue;
    const command = parseCommand(entry.command);
    return command ? { uri, version, range, text: entry.text, command } : { uri, version, range, text: entry.text };
  }
  return undefined;
}

/** The `didShowInlineEdit` notification for `edit`, or undefined when it has no item id to name. */
export function didShowParams(edit: NextEdit): { item: { command: { arguments: unknown[] } } } | undefined {
  const args = edit.command?.arguments ?? [];
  return args.length > 0 ? { item: { command: { arguments: args } } } : undefined;
}

export type TabAction = { kind: "jump"; to: LspPosition } | { kind: "apply" };

/** Whether the cursor is at the edit: on one of the lines it replaces. */
export function atEdit(edit: NextEdit, cursor: LspPosition): boolean {
  return cursor.line >= edit.range.start.line && cursor.line <= edit.range.end.line;
}

/** First Tab: jump to where the edit starts. Tab with the cursor at the edit: apply it. */
export function tabAction(edit: NextEdit, cursor: LspPosition): TabAction {
  return atEdit(edit, cursor) ? { kind: "apply" } : { kind: "jump", to: edit.range.start };
}

/** The status bar hint while an edit is shown. */
export function hintText(edit: NextEdit, cursor: LspPosition): string {
  return atEdit(edit, cursor)
    ? "$(check) Tab to apply next edit"
    : `$(arrow-${edit.range.start.line < cursor.line ? "up" : "down"}) Tab to jump to line ${edit.range.start.line + 1}`;
}

/** Where the editor draws an edit. */
export interface NextEditView {
  /** Shown struck through: the text that goes; undefined when the edit only inserts. */
  removed?: LspRange;
  /** Where the new text is shown (just after `removed`). */
  insertAt: LspPosition;
  /** The new text's first line, shown after `removed`; "" when the edit only deletes. */
  inserted: string;
  /** Lines of the new text after the first (they are shown in the hover). */
  moreLines: number;
  /** The whole new text when it does not fit on one line, for the hover; undefined otherwise. */
  fullText?: string;
  /** The line the gutter and overview ruler mark. */
  markerLine: number;
}

/** `start` moved over `text`. */
export function advance(start: LspPosition, text: string): LspPosition {
  const lines = text.split("\n");
  if (lines.length === 1) return { line: start.line, character: start.character + text.length };
  return { line: start.line + lines.length - 1, character: lines[lines.length - 1].length };
}

const WORD = /[\p{L}\p{N}_]/u;

function isWord(ch: string | undefined): boolean {
  return ch !== undefined && WORD.test(ch);
}

function isLowSurrogate(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * How long a prefix `a` and `b` share, backed off to the start of a word cut in two (so a changed name
 * shows whole, struck through and rewritten, not as a changed tail) and never splitting a surrogate pair.
 */
function sharedPrefix(a: string, b: string, limit: number): number {
  let n = 0;
  while (n < limit && a[n] === b[n]) n++;
  while (n > 0 && isWord(a[n - 1]) && (isWord(a[n]) || isWord(b[n]))) n--;
  while (n > 0 && (isLowSurrogate(a, n) || isLowSurrogate(b, n))) n--;
  return n;
}

function reversed(text: string): string {
  return Array.from(text).reverse().join("");
}

/**
 * What to draw for `edit`, whose range holds `oldText` now: the text the old and new share at either end
 * is left alone, so a whole line rewritten to change one name shows just that name struck through and
 * its replacement after it.
 */
export function viewOf(edit: NextEdit, oldText: string): NextEditView {
  const text = edit.text;
  const limit = Math.min(oldText.length, text.length);
  const prefix = sharedPrefix(oldText, text, limit);
  const suffix = sharedPrefix(reversed(oldText.slice(prefix)), reversed(text.slice(prefix)), limit - prefix);
  const removedStart = advance(edit.range.start, oldText.slice(0, prefix));
  const removedEnd = advance(edit.range.start, oldText.slice(0, oldText.length - suffix));
  const newText = text.slice(prefix, text.length - suffix);
  const lines = newText.split("\n");
  const view: NextEditView = {
    insertAt: removedEnd,
    inserted: lines[0],
    moreLines: lines.length - 1,
    markerLine: removedStart.line,
  };
  if (comparePositions(removedStart, removedEnd) < 0) view.removed = { start: removedStart, end: removedEnd };
  if (lines.length > 1) view.fullText = newText;
  return view;
}

/** The text drawn after the struck-through part: the new text's first line, and how many lines follow. */
export function insertedLabel(view: NextEditView): string {
  if (view.moreLines === 0) return view.inserted;
  return `${view.inserted} … (+${view.moreLines} line${view.moreLines === 1 ? "" : "s"})`;
}
