/**
 * Drives next edits in a real VS Code (code-server) through headless Chromium, as a user would: replace a
 * name on one line by typing, wait for the next edit drawn on another line (the old name struck through,
 * the new one after it, the status bar's "Tab to jump"), Escape (it goes), "dcomplete: Show the next edit"
 * (it comes back), Tab (the cursor jumps there), Tab (it is applied), save; then, in another file with no edit shown, Tab at the start of a line and save. It writes
 * what it saw to a JSON report; tests/editors/test_vscode_e2e.py judges it against the files on disk and
 * the server's log.
 *
 *   node out/test/e2e/nextEdit.e2e.js plan.json
 */
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import {
  Plan as BasePlan,
  goTo,
  openFile,
  runCommand,
  runDriver,
  saveAndRead,
  screenshot,
  statusText,
  waitFor,
} from "./workbench";

interface Plan extends BasePlan {
  file: string; // absolute path inside the workspace
  editLine: number; // 1-based line of the name the user replaces
  editColumn: number; // 1-based column where it starts
  oldText: string;
  newText: string;
  indentFile: string; // a file where Tab must still indent
  indentLine: number; // 1-based
  readyPattern: string; // regular expression the status bar item matches once the model is loaded
}

/** A next edit as the page shows it. */
interface Shown {
  hint: string; // the status bar hint
  struck: string[]; // text drawn struck through
  lines: string[]; // the editor lines holding it, with what is drawn after the struck text
}

interface Report {
  shown: Shown;
  jumpedTo: string; // VS Code's cursor position item after the first Tab ("Ln 9, Col 16")
  hintAtTarget: string; // the hint with the cursor at the edit
  afterApply: string; // the file, saved after the second Tab
  afterEscape: { hints: string[]; struck: string[] }; // what was left of the edit on screen after Escape
  shownAgain: Shown; // the edit after "dcomplete: Show the next edit"
  hintBeforeIndent: string[]; // next-edit hints on screen before Tab in the other file (none)
  afterIndent: string;
  screenshots: string[];
}

const HINT = /Tab to (jump to line \d+|apply next edit)/;

async function hints(page: Page): Promise<string[]> {
  const texts = await page.locator(".statusbar-item").allInnerTexts();
  return texts.map((text) => text.trim()).filter((text) => HINT.test(text));
}

/** The struck-through text in the editor and the lines it is on, as drawn: with the text VS Code draws
 * after a span (an `after` decoration's contentText is CSS `::after` content, not text in the DOM). Runs in
 * the page (a string: this project compiles without the DOM's types). */
const STRUCK_THROUGH = `(() => {
  const text = (span) => span.innerText.replace(/\u00a0/g, " ");
  const after = (span) => {
    const content = getComputedStyle(span, "::after").content;
    return content && content !== "none" && content !== "normal" ? JSON.parse(content) : "";
  };
  const leaves = (root) => Array.from(root.querySelectorAll("span")).filter((span) => span.children.length === 0);
  const struck = [];
  const lines = new Set();
  for (const span of leaves(document.querySelector(".monaco-editor .view-lines"))) {
    if (!getComputedStyle(span).textDecorationLine.includes("line-through")) continue;
    struck.push(text(span));
    const line = span.closest(".view-line");
    if (line) lines.add(leaves(line).map((leaf) => text(leaf) + after(leaf)).join(""));
  }
  return { struck, lines: [...lines] };
})()`;

async function struckThrough(page: Page): Promise<Pick<Shown, "struck" | "lines">> {
  return page.evaluate(STRUCK_THROUGH) as Promise<Pick<Shown, "struck" | "lines">>;
}

function count(text: string, name: string): number {
  return text.split(name).length - 1;
}

async function editorText(page: Page): Promise<string> {
  return page.locator(".monaco-editor .view-lines").first().innerText();
}

/** The next edit once it is on screen: the status bar's "Tab to jump" and the struck-through text. */
async function nextEditOnScreen(page: Page, plan: Plan): Promise<Shown> {
  const hint = await statusText(page, plan, "Tab to jump to line \\d+");
  const drawn = await waitFor(page, plan, "the next edit drawn in the editor", async () => {
    const found = await struckThrough(page);
    return found.struck.length > 0 ? found : undefined;
  });
  return { hint, ...drawn };
}

/** The user's edit: select the old name and type the new one. */
async function replaceName(page: Page, plan: Plan): Promise<void> {
  await goTo(page, plan, plan.editLine, plan.editColumn);
  for (let i = 0; i < plan.oldText.length; i++) await page.keyboard.press("Shift+ArrowRight");
  await page.keyboard.type(plan.newText, { delay: 30 });
}

async function followNextEdit(page: Page, plan: Plan, shots: string[]): Promise<Omit<Report, "hintBeforeIndent" | "afterIndent">> {
  const before = readFileSync(plan.file, "utf8");
  const names = count(before, plan.oldText);
  await openFile(page, plan, plan.file);
  await statusText(page, plan, plan.readyPattern);
  await replaceName(page, plan);
  const { hint, ...drawn } = await nextEditOnScreen(page, plan);
  await screenshot(page, plan, shots, "vscode-next-edit.png");
  await page.keyboard.press("Escape");
  const afterEscape = await waitFor(page, plan, "the next edit dismissed", async () => {
    const left = { hints: await hints(page), struck: (await struckThrough(page)).struck };
    return left.hints.length === 0 && left.struck.length === 0 ? left : undefined;
  }, 10_000);
  await runCommand(page, plan, "dcomplete: Show the next edit");
  const shownAgain = await nextEditOnScreen(page, plan);
  const target = Number(/line (\d+)/.exec(shownAgain.hint)?.[1]);

  await page.keyboard.press("Tab");
  const jumpedTo = await statusText(page, plan, `^Ln ${target}, Col \\d+$`);
  const hintAtTarget = await statusText(page, plan, "Tab to apply next edit");
  await page.keyboard.press("Tab");
  await waitFor(page, plan, "the next edit to be applied", async () => count(await editorText(page), plan.oldText) === names - 2);
  const afterApply = await saveAndRead(page, plan, plan.file, before);
  return { shown: { hint, ...drawn }, afterEscape, shownAgain, jumpedTo, hintAtTarget, afterApply, screenshots: shots };
}

runDriver<Plan>(async (page, plan): Promise<Report> => {
  const followed = await followNextEdit(page, plan, []);
  const before = readFileSync(plan.indentFile, "utf8");
  await openFile(page, plan, plan.indentFile);
  const hintBeforeIndent = await hints(page);
  await goTo(page, plan, plan.indentLine, 1);
  await page.keyboard.press("Tab");
  const afterIndent = await saveAndRead(page, plan, plan.indentFile, before);
  return { ...followed, hintBeforeIndent, afterIndent };
});
