/**
 * Drives the extension in a real VS Code (code-server) through headless Chromium, as a user would:
 * type, wait for the ghost text, type its first characters (it must stay, showing the rest), Tab,
 * save; run "dcomplete: Fill holes in file" from the command palette, save. It waits on real
 * conditions only (elements on screen, file contents on disk) and writes what it saw to a JSON report;
 * tests/editors/test_vscode_e2e.py judges it against the language server's log. On a failed wait it
 * saves a screenshot and names it in the error (./workbench.ts).
 *
 *   node out/test/e2e/codeServer.e2e.js plan.json
 */
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import {
  Plan as BasePlan,
  goToLineEnd,
  openFile,
  runCommand,
  runDriver,
  saveAndRead,
  screenshot,
  statusText,
  waitFor,
} from "./workbench";

interface Plan extends BasePlan {
  completionFile: string; // absolute path inside the workspace
  completionLine: number; // 1-based
  typed: string;
  typeThrough: number; // characters of the ghost text to type before Tab
  holesFile: string;
  readyPattern: string; // regular expression the status bar item matches once the model is loaded
  statusPattern: string; // regular expression the status bar item must match after a completion
}

interface Report {
  ghostShown: string; // the ghost text when it first appeared
  typedThrough: string; // its first characters, typed
  ghostAfterTyping: string; // the ghost text right after them
  afterAccept: string;
  status: string;
  afterHoles: string;
  screenshots: string[];
}

const GHOST_TEXT = ".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text";

/** The ghost text on screen (its first line), with the editor's non-breaking spaces as spaces. */
async function ghostText(page: Page): Promise<string> {
  const text = await page.locator(GHOST_TEXT).first().innerText();
  return text.replace(/\u00a0/g, " ");
}

type Accepted = Pick<Report, "ghostShown" | "typedThrough" | "ghostAfterTyping" | "afterAccept">;

/** Types, waits for the ghost text, types its first `plan.typeThrough` characters (the ghost text must
 * stay, showing the rest), then accepts with Tab and saves. */
async function acceptGhostText(page: Page, plan: Plan, shots: string[]): Promise<Accepted> {
  const before = readFileSync(plan.completionFile, "utf8");
  await openFile(page, plan, plan.completionFile);
  await statusText(page, plan, plan.readyPattern);
  await goToLineEnd(page, plan, plan.completionLine);
  await page.keyboard.type(plan.typed, { delay: 30 });
  await waitFor(page, plan, "the ghost text", () => page.locator(GHOST_TEXT).first().isVisible());
  await screenshot(page, plan, shots, "vscode-ghost-text.png");
  const ghostShown = await ghostText(page);
  const typedThrough = ghostShown.slice(0, plan.typeThrough);
  await page.keyboard.type(typedThrough, { delay: 30 });
  const ghostAfterTyping = await waitFor(page, plan, "the rest of the ghost text", async () => {
    const now = await ghostText(page);
    return now === ghostShown.slice(typedThrough.length) ? now : undefined;
  }, 10_000);
  await page.keyboard.press("Tab");
  await waitFor(page, plan, "the ghost text to be accepted", async () => !(await page.locator(GHOST_TEXT).count()));
  const afterAccept = await saveAndRead(page, plan, plan.completionFile, before);
  return { ghostShown, typedThrough, ghostAfterTyping, afterAccept };
}

async function fillHoles(page: Page, plan: Plan, shots: string[]): Promise<string> {
  const before = readFileSync(plan.holesFile, "utf8");
  await openFile(page, plan, plan.holesFile);
  await runCommand(page, plan, "dcomplete: Fill holes in file");
  await waitFor(page, plan, "the holes to be filled in the editor", async () => {
    const shown = await page.locator(".monaco-editor .view-lines").first().innerText();
    return !shown.includes("<|hole|>");
  });
  const after = await saveAndRead(page, plan, plan.holesFile, before);
  await screenshot(page, plan, shots, "vscode-fill-holes.png");
  return after;
}

runDriver<Plan>(async (page, plan): Promise<Report> => {
  const shots: string[] = [];
  const accepted = await acceptGhostText(page, plan, shots);
  const status = await statusText(page, plan, plan.statusPattern);
  const afterHoles = await fillHoles(page, plan, shots);
  return { ...accepted, status, afterHoles, screenshots: shots };
});
