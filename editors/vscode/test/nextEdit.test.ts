import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  NextEdit,
  advance,
  atEdit,
  didShowParams,
  hintText,
  inlineEditParams,
  insertedLabel,
  parseInlineEdits,
  tabAction,
  viewOf,
} from "../src/nextEdit";

const pos = (line: number, character: number) => ({ line, character });
const URI = "file:///work/views.py";
const LINES = [
  "class UserView(View):",
  "    def get(self, request, user_id):",
  '        return JsonResponse({"error": "not found"}, status=404)',
  "        return JsonResponse(user.to_dict())",
];

/** The text of `range` in LINES. */
function textOf(range: { start: { line: number; character: number }; end: { line: number; character: number } }): string {
  const offsets = LINES.map((_, n) => LINES.slice(0, n).reduce((sum, line) => sum + line.length + 1, 0));
  const all = LINES.join("\n");
  return all.slice(offsets[range.start.line] + range.start.character, offsets[range.end.line] + range.end.character);
}

function edit(range: NextEdit["range"], text: string): NextEdit {
  return { uri: URI, version: 7, range, text, command: { title: "Accept next edit", command: "dcomplete.acceptedInlineEdit", arguments: ["id-1"] } };
}

const NAME = edit({ start: pos(3, 15), end: pos(3, 27) }, "self.render");

test("the request names the document, its version and the cursor", () => {
  assert.deepEqual(inlineEditParams(URI, 7, pos(2, 30)), {
    textDocument: { uri: URI, version: 7 },
    position: { line: 2, character: 30 },
    context: { triggerKind: 2 },
  });
});

test("the first well-formed edit of a result is the one shown", () => {
  const result = {
    edits: [
      { text: "x", textDocument: { uri: URI }, range: NAME.range }, // no version
      { text: "x", textDocument: { uri: URI, version: 7 }, range: { start: pos(3, 9), end: pos(3, 2) } }, // backwards
      { text: "self.render", textDocument: { uri: URI, version: 7 }, range: NAME.range, command: NAME.command },
      { text: "later", textDocument: { uri: URI, version: 7 }, range: NAME.range },
    ],
  };
  assert.deepEqual(parseInlineEdits(result), NAME);
  assert.equal(parseInlineEdits({ edits: [] }), undefined);
  assert.equal(parseInlineEdits(null), undefined);
  assert.equal(parseInlineEdits({ edits: [{ text: 3 }] }), undefined);
  const withoutCommand = parseInlineEdits({ edits: [{ text: "", textDocument: { uri: URI, version: 0 }, range: NAME.range }] });
  assert.deepEqual(withoutCommand, { uri: URI, version: 0, range: NAME.range, text: "" });
  assert.equal(didShowParams(withoutCommand!), undefined);
  assert.deepEqual(didShowParams(NAME), { item: { command: { arguments: ["id-1"] } } });
});

test("Tab jumps to the edit's start from another line, and applies it from one of its lines", () => {
  assert.deepEqual(tabAction(NAME, pos(2, 20)), { kind: "jump", to: pos(3, 15) });
  assert.deepEqual(tabAction(NAME, pos(0, 0)), { kind: "jump", to: pos(3, 15) });
  // after the jump the cursor is at the start: the second Tab applies
  assert.deepEqual(tabAction(NAME, pos(3, 15)), { kind: "apply" });
  assert.deepEqual(tabAction(NAME, pos(3, 0)), { kind: "apply" });
  const lines = edit({ start: pos(1, 0), end: pos(3, 0) }, "");
  assert.equal(atEdit(lines, pos(2, 4)), true);
  assert.equal(atEdit(lines, pos(4, 0)), false);
});

test("the hint says where Tab goes", () => {
  assert.equal(hintText(NAME, pos(2, 20)), "$(arrow-down) Tab to jump to line 4");
  assert.equal(hintText(edit({ start: pos(0, 0), end: pos(0, 5) }, "x"), pos(2, 0)), "$(arrow-up) Tab to jump to line 1");
  assert.equal(hintText(NAME, pos(3, 15)), "$(check) Tab to apply next edit");
});

test("a replaced name is struck through with the new name after it", () => {
  assert.deepEqual(viewOf(NAME, textOf(NAME.range)), {
    removed: { start: pos(3, 15), end: pos(3, 27) },
    insertAt: pos(3, 27),
    inserted: "self.render",
    moreLines: 0,
    markerLine: 3,
  });
});

test("a whole line rewritten to change one name shows only that name", () => {
  const line = edit({ start: pos(3, 0), end: pos(3, LINES[3].length) }, "        return self.render(user.to_dict())");
  const view = viewOf(line, textOf(line.range));
  assert.deepEqual(view.removed, { start: pos(3, 15), end: pos(3, 27) });
  assert.equal(view.inserted, "self.render");
});

test("a name changed at its end is shown whole, not as a changed tail", () => {
  const renamed = edit({ start: pos(1, 8), end: pos(1, 11) }, "fetch");
  const view = viewOf(renamed, "get");
  assert.deepEqual(view.removed, { start: pos(1, 8), end: pos(1, 11) });
  assert.equal(view.inserted, "fetch");
  const tail = viewOf(edit({ start: pos(0, 0), end: pos(0, 7) }, "user_ids"), "user_id");
  assert.deepEqual(tail.removed, { start: pos(0, 0), end: pos(0, 7) });
  assert.equal(tail.inserted, "user_ids");
});

test("an insertion has nothing struck through; a deletion shows nothing new", () => {
  const insert = viewOf(edit({ start: pos(3, 8), end: pos(3, 8) }, "assert user\n        "), "");
  assert.equal(insert.removed, undefined);
  assert.deepEqual(insert.insertAt, pos(3, 8));
  assert.equal(insertedLabel(insert), "assert user … (+1 line)");
  assert.equal(insert.fullText, "assert user\n        ");
  const deletion = viewOf(edit({ start: pos(2, 0), end: pos(3, 0) }, ""), `${LINES[2]}\n`);
  assert.deepEqual(deletion.removed, { start: pos(2, 0), end: pos(3, 0) });
  assert.equal(insertedLabel(deletion), "");
  assert.equal(deletion.fullText, undefined);
});

test("several new lines are counted in the label and kept whole for the hover", () => {
  const view = viewOf(edit({ start: pos(2, 15), end: pos(2, 27) }, "a(\n  b,\n  c)"), "JsonResponse");
  assert.equal(insertedLabel(view), "a( … (+2 lines)");
  assert.equal(view.fullText, "a(\n  b,\n  c)");
});

test("positions move over text in UTF-16 units, line by line", () => {
  assert.deepEqual(advance(pos(2, 4), "ab"), pos(2, 6));
  assert.deepEqual(advance(pos(2, 4), "ab\ncde"), pos(3, 3));
  assert.deepEqual(advance(pos(2, 4), "😀"), pos(2, 6));
  // a shared emoji is never split in two
  const view = viewOf(edit({ start: pos(0, 0), end: pos(0, 3) }, "😀b"), "😀a");
  assert.deepEqual(view.removed, { start: pos(0, 2), end: pos(0, 3) });
  assert.equal(view.inserted, "b");
  const pair = viewOf(edit({ start: pos(0, 0), end: pos(0, 2) }, "😁"), "😀");
  assert.deepEqual(pair.removed, { start: pos(0, 0), end: pos(0, 2) });
  assert.equal(pair.inserted, "😁");
});
