/**
 * Arguments of the server's workspace/executeCommand commands, built from plain positions so they can
 * be unit-tested without the `vscode` module. Positions are LSP positions (0-based line, UTF-16 character).
 */

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export const SERVER_COMMANDS = {
  regenerateSelection: "dcomplete.regenerateSelection",
  fillHoles: "dcomplete.fillHoles",
  refactorSelection: "dcomplete.refactorSelection",
  accepted: "dcomplete.accepted",
} as const;

/**
 * The server regenerates whole lines. An empty selection means the cursor line. A selection that ends
 * at column 0 of a later line does not include that line (what a user selecting full lines means).
 */
export function wholeLineRange(selection: LspRange, lineLength: (line: number) => number): LspRange {
  const startLine = Math.min(selection.start.line, selection.end.line);
  let endLine = Math.max(selection.start.line, selection.end.line);
  const endCharacter = selection.start.line <= selection.end.line ? selection.end.character : selection.start.character;
  if (endLine > startLine && endCharacter === 0) {
    endLine -= 1;
  }
  const endLength = lineLength(endLine);
  if (endLength === 0 && endLine > startLine) {
    // The server reads an end at column 0 as "stop on the line above"; point past the empty line instead.
    return { start: { line: startLine, character: 0 }, end: { line: endLine + 1, character: 0 } };
  }
  return { start: { line: startLine, character: 0 }, end: { line: endLine, character: endLength } };
}

export function regenerateArgs(uri: string, range: LspRange): [{ uri: string; range: LspRange }] {
  return [{ uri, range }];
}

export function fillHolesArgs(uri: string): [{ uri: string }] {
  return [{ uri }];
}

export function refactorArgs(
  uri: string,
  range: LspRange,
  instruction: string,
): [{ uri: string; range: LspRange; instruction: string }] {
  const trimmed = instruction.trim();
  if (trimmed === "") {
    throw new Error("the refactoring instruction is empty");
  }
  return [{ uri, range, instruction: trimmed }];
}

/**
 * A "Refactor selection with instruction" code action reaches the client without an instruction (the
 * server cannot ask the user). When `args` are such a call, returns a function that completes them with
 * the user's instruction; otherwise undefined (the command runs as it is).
 */
export function missingInstruction(command: string, args: unknown[]): ((instruction: string) => unknown[]) | undefined {
  if (command !== SERVER_COMMANDS.refactorSelection) return undefined;
  const first = args[0];
  if (typeof first !== "object" || first === null) return undefined;
  const given = (first as { instruction?: unknown }).instruction;
  if (typeof given === "string" && given.trim() !== "") return undefined;
  return (instruction: string) => [{ ...(first as object), instruction: instruction.trim() }, ...args.slice(1)];
}
