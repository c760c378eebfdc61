/**
 * What the end-to-end drivers (codeServer.e2e.ts, nextEdit.e2e.ts) do in VS Code's workbench through
 * headless Chromium, as a user would: open a file with quick open, run a command from the palette, go to a
 * line, save, read the status bar. Every wait is on a real condition (an element on screen, a file on disk);
 * a wait that times out saves a screenshot and names it in its error.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";

/** What every driver's plan holds (the test writes it as JSON). */
export interface Plan {
  url: string;
  chromium: string;
  screenshots: string; // folder
  report: string; // JSON file written at the end
  timeoutMs: number;
}

const POLL_MS = 100;

export class WaitFailed extends Error {}

/** Polls `condition` until it returns a value other than undefined/false; on timeout, a screenshot. */
export async function waitFor<T>(
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

export function fileName(path: string): string {
  return path.split("/").pop() ?? path;
}

export async function openFile(page: Page, plan: Plan, path: string): Promise<void> {
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

export async function runCommand(page: Page, plan: Plan, title: string): Promise<void> {
  await page.keyboard.press("Control+Shift+P");
  const input = page.locator(".quick-input-widget input");
  await waitFor(page, plan, "the command palette", () => input.isVisible(), 30_000);
  await input.fill(`>${title}`);
  await waitFor(page, plan, `"${title}" in the command palette`, () =>
    page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().isVisible(),
  );
  await page.keyboard.press("Enter");
}

/** Moves the cursor to `line` (1-based) and, when given, `column` (1-based) with "Go to Line". */
export async function goTo(page: Page, plan: Plan, line: number, column?: number): Promise<void> {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await waitFor(page, plan, "the go-to-line box", () => input.isVisible(), 30_000);
  await input.fill(column === undefined ? `:${line}` : `:${line}:${column}`);
  await page.keyboard.press("Enter");
}

export async function goToLineEnd(page: Page, plan: Plan, line: number): Promise<void> {
  await goTo(page, plan, line);
  await page.keyboard.press("End");
}

/** Saves the active editor and waits until the file on disk differs from `before` and has stopped
 * changing (a save truncates the file before it writes it, so one read can see it empty). */
export async function saveAndRead(page: Page, plan: Plan, path: string, before: string): Promise<string> {
  await page.keyboard.press("Control+S");
  return waitFor(page, plan, `${fileName(path)} saved with new contents`, async () => {
    const now = readFileSync(path, "utf8");
    if (now === before || now === "") return undefined;
    await page.waitForTimeout(200);
    return readFileSync(path, "utf8") === now ? now : undefined;
  });
}

export async function statusText(page: Page, plan: Plan, source: string): Promise<string> {
  const pattern = new RegExp(source);
  return waitFor(page, plan, `a status bar item matching /${source}/`, async () => {
    const texts = await page.locator(".statusbar-item").allInnerTexts();
    return texts.map((text) => text.trim()).find((text) => pattern.test(text));
  });
}

/** Saves a screenshot named `name` into the plan's folder and adds its path to `shots`. */
export async function screenshot(page: Page, plan: Plan, shots: string[], name: string): Promise<void> {
  shots.push(join(plan.screenshots, name));
  await page.screenshot({ path: shots[shots.length - 1] });
}

/** Reads the plan named on the command line, opens the workbench, runs `drive` and writes its report. */
export function runDriver<P extends Plan>(drive: (page: Page, plan: P) => Promise<object>): void {
  const main = async (planPath: string) => {
    const plan = JSON.parse(readFileSync(planPath, "utf8")) as P;
    const browser = await chromium.launch({ executablePath: plan.chromium, headless: true });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 560 } });
      await page.goto(plan.url);
      await waitFor(page, plan, "the VS Code workbench", () => page.locator(".monaco-workbench").isVisible(), 60_000);
      writeFileSync(plan.report, JSON.stringify(await drive(page, plan), null, 2));
    } finally {
      await browser.close();
    }
  };
  main(process.argv[2]).catch((error: unknown) => {
    console.error(error instanceof WaitFailed ? error.message : error);
    process.exit(1);
  });
}
