/**
 * Drives the extension in a real VS Code (code-server) through headless Chromium, as a user would:
 * type, wait for the ghost text, type its first characters (it must stay, showing the rest), Tab,
 * save; run "dcomplete: Fill holes in file" from the command palette, save. It waits on real
 * conditions only (elements on screen, file contents on disk) and writes what it saw to a JSON report;
 * tests/editors/test_vscode_e2e.py judges it against the language server's log. On a failed wait it saves a screenshot and names it in the error.
 *
 *   node out/test/e2e/codeServer.e2e.js plan.json
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";

interface Plan {
  url: string;
  chromium: string;
  completionFile: string; // absolute path inside the workspace
  completionLine: number; // 1-based
  typed: string;
  typeThrough: number; // characters of the ghost text to type before Tab
  holesFile: string;
  readyPattern: string; // regular expression the status bar item matches once the model is loaded
  statusPattern: string; // regular expression the status bar item must match after a completion
  screenshots: string; // folder
  report: string; // JSON file written at the end
  timeoutMs: number;
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
const POLL_MS = 100;

class WaitFailed extends Error {}

/** Polls `condition` until it returns a value other than undefined/false; on timeout, a screenshot. */
async function waitFor<T>(
  page: Page,
  plan: Plan,
  what: string,
  condition: () => Promise<T | undefined | false>,
  timeoutMs = plan.timeoutMs,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const shot = join(plan.screenshots, `failed-${what.replace(/\W+/g, "-")}.png`);
      await page.screenshot({ path: shot }).catch(() => undefined);
      throw new WaitFailed(`timed out after ${timeoutMs / 1000} s waiting for ${what}; screenshot: ${shot}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function fileName(path: string): string {
  return path.split("/").pop() ?? path;
}

async function openFile(page: Page, plan: Plan, path: string): Promise<void> {
  const name = fileName(path);
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await waitFor(page, plan, "the quick open box", () => input.isVisible(), 30_000);
  await input.fill(name);
  await waitFor(page, plan, `${name} in quick open`, () =>
    page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().isVisible(),
  );
  await page.keyboard.press("Enter");
  await waitFor(page, plan, `the editor tab of ${name}`, () =>
    page.locator(".tab.active", { hasText: name }).isVisible(),
  );
  await page.locator(".monaco-editor .view-lines").first().click();
}

async function runCommand(page: Page, plan: Plan, title: string): Promise<void> {
  await page.keyboard.press("Control+Shift+P");
  const input = page.locator(".quick-input-widget input");
  await waitFor(page, plan, "the command palette", () => input.isVisible(), 30_000);
  await input.fill(`>${title}`);
  await waitFor(page, plan, `"${title}" in the command palette`, () =>
    page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().isVisible(),
  );
  await page.keyboard.press("Enter");
}

async function goToLineEnd(page: Page, plan: Plan, line: number): Promise<void> {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await waitFor(page, plan, "the go-to-line box", () => input.isVisible(), 30_000);
  await input.fill(`:${line}`);
  await page.keyboard.press("Enter");
  await page.keyboard.press("End");
}

/** Saves the active editor and waits until the file on disk differs from `before` and has stopped
 * changing (a save truncates the file before it writes it, so one read can see it empty). */
async function saveAndRead(page: Page, plan: Plan, path: string, before: string): Promise<string> {
  await page.keyboard.press("Control+S");
  return waitFor(page, plan, `${fileName(path)} saved with new contents`, async () => {
    const now = readFileSync(path, "utf8");
    if (now === before || now === "") return undefined;
    await page.waitForTimeout(200);
    return readFileSync(path, "utf8") === now ? now : undefined;
  });
}

async function statusText(page: Page, plan: Plan, source: string): Promise<string> {
  const pattern = new RegExp(source);
  return waitFor(page, plan, `a status bar item matching /${source}/`, async () => {
    const texts = await page.locator(".statusbar-item").allInnerTexts();
    return texts.map((text) => text.trim()).find((text) => pattern.test(text));
  });
}

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
  shots.push(join(plan.screenshots, "vscode-ghost-text.png"));
  await page.screenshot({ path: shots[shots.length - 1] });
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
  shots.push(join(plan.screenshots, "vscode-fill-holes.png"));
  await page.screenshot({ path: shots[shots.length - 1] });
  return after;
}

async function main(planPath: string): Promise<void> {
  const plan = JSON.parse(readFileSync(planPath, "utf8")) as Plan;
  const browser = await chromium.launch({ executablePath: plan.chromium, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 560 } });
    await page.goto(plan.url);
    await waitFor(page, plan, "the VS Code workbench", () => page.locator(".monaco-workbench").isVisible(), 60_000);
    const shots: string[] = [];
    const accepted = await acceptGhostText(page, plan, shots);
    const status = await statusText(page, plan, plan.statusPattern);
    const afterHoles = await fillHoles(page, plan, shots);
    const report: Report = { ...accepted, status, afterHoles, screenshots: shots };
    writeFileSync(plan.report, JSON.stringify(report, null, 2));
  } finally {
    await browser.close();
  }
}

main(process.argv[2]).catch((error: unknown) => {
  console.error(error instanceof WaitFailed ? error.message : error);
  process.exit(1);
});
