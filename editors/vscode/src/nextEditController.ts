/**
 * Next edits in the editor, with the stable API only (an extension using the proposed
 * `inlineCompletionsAdditions` API cannot be published): when the user stops typing in a document, ask the
 * server for the edit their last edit implies elsewhere (`textDocument/copilotInlineEdit`) and draw it
 * where it would land: the text that goes struck through, the new text after it, a gutter and overview
 * ruler mark, and a status bar hint. Tab jumps there, Tab again applies it (then runs the item's command on
 * the server and asks for the next place), Escape dismisses; any change to the document takes it away.
 * The decisions (what to draw, what Tab does) are in ./nextEdit.ts.
 */
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { LspPosition, LspRange } from "./commandArgs";
import {
  DID_SHOW_INLINE_EDIT,
  INLINE_EDIT_REQUEST,
  NextEdit,
  advance,
  didShowParams,
  hintText,
  inlineEditParams,
  insertedLabel,
  parseInlineEdits,
  tabAction,
  viewOf,
} from "./nextEdit";
import { nextEditSettings } from "./settings";

export const NEXT_EDIT_COMMANDS = {
  show: "dcomplete.nextEdit.show",
  jumpOrApply: "dcomplete.nextEdit.jumpOrApply",
  dismiss: "dcomplete.nextEdit.dismiss",
} as const;
/** The context key package.json's Tab and Escape bindings wait for. */
const VISIBLE_KEY = "dcomplete.nextEditVisible";
const HELP = "Next edit: Tab jumps to it, Tab again applies it, Escape dismisses it";

export interface NextEditHost {
  /** The running client, if any. */
  client(): LanguageClient | undefined;
  /** Whether the client is attached to `document` (its language and scheme). */
  attached(document: vscode.TextDocument): boolean;
  /** Runs an accepted item's command on the server (`workspace/executeCommand`). */
  runServerCommand(client: LanguageClient, command: string, args: unknown[]): Promise<void>;
  output: vscode.LogOutputChannel;
  gutterIcon: vscode.Uri;
}

interface Shown {
  editor: vscode.TextEditor;
  edit: NextEdit;
}

function toPosition(position: LspPosition): vscode.Position {
  return new vscode.Position(position.line, position.character);
}

function toRange(range: LspRange): vscode.Range {
  return new vscode.Range(toPosition(range.start), toPosition(range.end));
}

export class NextEditController implements vscode.Disposable {
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly inserted: vscode.TextEditorDecorationType;
  private readonly marker: vscode.TextEditorDecorationType;
  private readonly hint: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: vscode.CancellationTokenSource | undefined;
  private shown: Shown | undefined;

  constructor(private readonly host: NextEditHost) {
    this.removed = vscode.window.createTextEditorDecorationType({
      textDecoration: "line-through",
      backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
      border: "1px solid",
      borderColor: new vscode.ThemeColor("diffEditor.removedTextBorder"),
    });
    this.inserted = vscode.window.createTextEditorDecorationType({
      after: {
        backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
        border: "1px solid",
        borderColor: new vscode.ThemeColor("diffEditor.insertedTextBorder"),
      },
    });
    this.marker = vscode.window.createTextEditorDecorationType({
      gutterIconPath: host.gutterIcon,
      gutterIconSize: "contain",
      overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.modifiedForeground"),
      overviewRulerLane: vscode.OverviewRulerLane.Full,
      isWholeLine: true,
    });
    this.hint = vscode.window.createStatusBarItem("dcomplete.nextEdit", vscode.StatusBarAlignment.Left, 1000);
    this.hint.name = "dcomplete next edit";
    this.hint.tooltip = HELP;
    this.hint.command = NEXT_EDIT_COMMANDS.jumpOrApply;
    this.disposables.push(
      this.removed,
      this.inserted,
      this.marker,
      this.hint,
      vscode.commands.registerCommand(NEXT_EDIT_COMMANDS.jumpOrApply, () => this.jumpOrApply()),
      vscode.commands.registerCommand(NEXT_EDIT_COMMANDS.dismiss, () => this.dismiss()),
      vscode.commands.registerCommand(NEXT_EDIT_COMMANDS.show, () => this.showNow()),
      vscode.workspace.onDidChangeTextDocument((event) => this.onDidChange(event)),
      vscode.window.onDidChangeActiveTextEditor(() => this.dismiss()),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (event.textEditor === this.shown?.editor) this.showHint(this.shown);
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("dcomplete.nextEdit.enabled") && !this.settings().enabled) this.dismiss();
      }),
    );
  }

  dispose(): void {
    this.dismiss();
    for (const disposable of this.disposables) disposable.dispose();
  }

  private settings() {
    return nextEditSettings(vscode.workspace.getConfiguration("dcomplete").get("nextEdit"));
  }

  private onDidChange(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length === 0) return;
    if (event.document === this.shown?.editor.document) this.clear();
    if (event.document === vscode.window.activeTextEditor?.document) this.schedule();
  }

  /** Asks for the active document's next edit after `delayMs` (the setting's wait when undefined); an
   * earlier wait or request still running is dropped. */
  private schedule(delayMs?: number): void {
    this.cancel();
    const editor = vscode.window.activeTextEditor;
    const settings = this.settings();
    if (!editor || !settings.enabled || !this.host.attached(editor.document)) return;
    this.timer = setTimeout(() => void this.request(editor), delayMs ?? settings.debounceMs);
  }

  private cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight?.cancel();
    this.inFlight = undefined;
  }

  /** Asks at once, whatever the last change, and says so when the server has nothing to show. */
  private async showNow(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !this.host.attached(editor.document)) return;
    this.dismiss();
    if ((await this.request(editor)) === "none") {
      vscode.window.setStatusBarMessage("$(info) dcomplete: no next edit here", 4000);
    }
  }

  /** Asks for `editor`'s next edit and shows it: "shown", "none" (the server has none, or no answer), or
   * "superseded" (the document or the active editor changed meanwhile, or a newer request replaced it). */
  private async request(editor: vscode.TextEditor): Promise<"shown" | "none" | "superseded"> {
    this.timer = undefined;
    const client = this.host.client();
    if (!client?.isRunning()) return "none";
    if (vscode.window.activeTextEditor !== editor) return "superseded";
    const document = editor.document;
    const version = document.version;
    const uri = client.code2ProtocolConverter.asUri(document.uri);
    const source = new vscode.CancellationTokenSource();
    this.inFlight = source;
    let result: unknown;
    try {
      result = await client.sendRequest(INLINE_EDIT_REQUEST, inlineEditParams(uri, version, editor.selection.active), source.token);
    } catch (error) {
      if (source.token.isCancellationRequested) return "superseded";
      this.host.output.warn(`next edit request failed: ${(error as Error).message}`);
      return "none";
    } finally {
      if (this.inFlight === source) this.inFlight = undefined;
    }
    const stale = source.token.isCancellationRequested || document.version !== version || vscode.window.activeTextEditor !== editor;
    source.dispose();
    if (stale) return "superseded";
    const edit = parseInlineEdits(result);
    if (!edit || edit.uri !== uri || edit.version !== version) return "none";
    const range = toRange(edit.range);
    if (!document.validateRange(range).isEqual(range)) {
      this.host.output.warn(`next edit range ${JSON.stringify(edit.range)} is outside ${uri}; not shown`);
      return "none";
    }
    this.show({ editor, edit }, client);
    return "shown";
  }

  private show(shown: Shown, client: LanguageClient): void {
    this.clear();
    const { editor, edit } = shown;
    const view = viewOf(edit, editor.document.getText(toRange(edit.range)));
    const hover = new vscode.MarkdownString(`**${HELP}**`);
    hover.appendCodeblock(view.fullText ?? edit.text, editor.document.languageId);
    editor.setDecorations(this.removed, view.removed ? [{ range: toRange(view.removed), hoverMessage: hover }] : []);
    const at = toPosition(view.insertAt);
    const label = insertedLabel(view);
    editor.setDecorations(
      this.inserted,
      label === "" ? [] : [{ range: new vscode.Range(at, at), hoverMessage: hover, renderOptions: { after: { contentText: label } } }],
    );
    editor.setDecorations(this.marker, [{ range: new vscode.Range(view.markerLine, 0, view.markerLine, 0), hoverMessage: hover }]);
    this.shown = shown;
    this.showHint(shown);
    void vscode.commands.executeCommand("setContext", VISIBLE_KEY, true);
    const params = didShowParams(edit);
    if (params) void client.sendNotification(DID_SHOW_INLINE_EDIT, params).catch(() => undefined);
  }

  private showHint(shown: Shown): void {
    this.hint.text = hintText(shown.edit, shown.editor.selection.active);
    this.hint.show();
  }

  /** Takes the shown edit off the screen. */
  private clear(): void {
    const shown = this.shown;
    this.shown = undefined;
    if (shown) {
      for (const type of [this.removed, this.inserted, this.marker]) shown.editor.setDecorations(type, []);
      this.hint.hide();
      void vscode.commands.executeCommand("setContext", VISIBLE_KEY, false);
    }
  }

  dismiss(): void {
    this.cancel();
    this.clear();
  }

  /** Tab while an edit is shown: jump to it, or, with the cursor there, apply it. Without one (the key
   * binding raced a change), Tab does what it does anyway. */
  async jumpOrApply(): Promise<void> {
    const shown = this.shown;
    const editor = vscode.window.activeTextEditor;
    if (!shown || editor !== shown.editor || editor.document.version !== shown.edit.version) {
      this.clear();
      await vscode.commands.executeCommand("tab");
      return;
    }
    const action = tabAction(shown.edit, editor.selection.active);
    if (action.kind === "jump") {
      const to = toPosition(action.to);
      editor.selection = new vscode.Selection(to, to);
      editor.revealRange(toRange(shown.edit.range), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      return;
    }
    await this.apply(editor, shown.edit);
  }

  private async apply(editor: vscode.TextEditor, edit: NextEdit): Promise<void> {
    this.dismiss();
    const applied = await editor.edit((builder) => builder.replace(toRange(edit.range), edit.text));
    if (!applied) {
      this.host.output.warn(`next edit could not be applied to ${editor.document.uri.toString()}`);
      return;
    }
    const end = toPosition(advance(edit.range.start, edit.text));
    editor.selection = new vscode.Selection(end, end);
    const client = this.host.client();
    if (edit.command && client?.isRunning()) {
      await this.host.runServerCommand(client, edit.command.command, edit.command.arguments);
    }
    if (vscode.window.activeTextEditor === editor) this.schedule(0);
  }
}
