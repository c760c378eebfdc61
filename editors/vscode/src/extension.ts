/**
 * VS Code entry point: starts `dcomplete serve` over stdio and lets vscode-languageclient (>= 10.0.1,
 * where textDocument/inlineCompletion is a built-in feature) drive inline completion. Everything that
 * can be decided without the editor lives in the sibling modules and is unit-tested there.
 */
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  LspRange,
  SERVER_COMMANDS,
  fillHolesArgs,
  missingInstruction,
  refactorArgs,
  regenerateArgs,
  wholeLineRange,
} from "./commandArgs";
import { NextEditController } from "./nextEditController";
import { RestartBudget } from "./restartPolicy";
import { buildServerCommand, describeCommandLine } from "./serverCommand";
import {
  ServerSettings,
  affectsServerCommand,
  affectsServerSettings,
  initializationOptions,
  toServerSettings,
  DEFAULT_LANGUAGES,
} from "./settings";
import {
  ClientState,
  STATUS_NOTIFICATION,
  ServerStatus,
  mergeStatus,
  parseStatus,
  statusText,
  statusTooltip,
} from "./status";

const SECTION = "dcomplete";
const ATTACHED_SCHEMES = ["file", "untitled"];

let client: LanguageClient | undefined;
let statusItem: vscode.StatusBarItem;
let output: vscode.LogOutputChannel;
let serverStatus: ServerStatus = {};
let clientState: ClientState = "stopped";
let attachedLanguages: ReadonlySet<string> = new Set();
const restarts = new RestartBudget();

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("dcomplete", { log: true });
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  statusItem.command = "dcomplete.editor.restartServer";
  context.subscriptions.push(output, statusItem);
  refreshStatus();
  statusItem.show();

  context.subscriptions.push(
    vscode.commands.registerCommand("dcomplete.editor.regenerateSelection", regenerateSelection),
    vscode.commands.registerCommand("dcomplete.editor.fillHoles", fillHoles),
    vscode.commands.registerCommand("dcomplete.editor.refactorSelection", refactorSelection),
    vscode.commands.registerCommand("dcomplete.editor.restartServer", restartServer),
    vscode.workspace.onDidChangeConfiguration(onConfigurationChanged),
    new NextEditController({
      client: () => client,
      attached: (document) =>
        ATTACHED_SCHEMES.includes(document.uri.scheme) && attachedLanguages.has(document.languageId),
      runServerCommand: executeOnServer,
      output,
      gutterIcon: vscode.Uri.joinPath(context.extensionUri, "media", "next-edit.svg"),
    }),
  );
  await startClient();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

function readSettings(): ServerSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const { settings, problems } = toServerSettings((key) => config.get(key));
  for (const problem of problems) {
    output.appendLine(`ignored setting: ${problem}`);
    void vscode.window.showWarningMessage(`dcomplete: ${problem}`);
  }
  return settings;
}

async function startClient(): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  let line;
  try {
    line = buildServerCommand({
      serverCommand: config.get("serverCommand"),
      pythonPath: config.get("pythonPath"),
      serverArgs: config.get("serverArgs"),
    });
  } catch (error) {
    setState("error");
    void vscode.window.showErrorMessage(`dcomplete: ${(error as Error).message}`);
    return;
  }
  output.appendLine(`starting server: ${describeCommandLine(line)}`);
  // No `transport`: with TransportKind.stdio the client appends `--stdio`, which `dcomplete serve` rejects;
  // without it, it still talks over the process's stdio.
  const serverOptions: ServerOptions = { command: line.command, args: line.args };
  const settings = readSettings();
  const languages = settings.languages ?? DEFAULT_LANGUAGES;
  attachedLanguages = new Set(languages);
  const clientOptions: LanguageClientOptions = {
    documentSelector: languages.flatMap((language) => ATTACHED_SCHEMES.map((scheme) => ({ scheme, language }))),
    initializationOptions: initializationOptions(settings),
    outputChannel: output,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue, handled: true }),
      closed: () => {
        const decision = restarts.onClosed();
        output.appendLine(decision.message);
        return { action: decision.restart ? CloseAction.Restart : CloseAction.DoNotRestart, message: decision.message };
      },
    },
    middleware: {
      executeCommand: async (command, args, next) => {
        const complete = missingInstruction(command, args);
        if (!complete) return next(command, args);
        const instruction = await askInstruction();
        return instruction === undefined ? undefined : next(command, complete(instruction));
      },
      workspace: {
        // Servers that pull settings (workspace/configuration) get the same mapped values as the push.
        configuration: (params, token, next) => {
          const sections = params.items.map((item) => item.section);
          if (sections.every((section) => section === SECTION)) {
            return sections.map(() => readSettings());
          }
          return next(params, token);
        },
      },
    },
  };
  client = new LanguageClient("dcomplete", "dcomplete", serverOptions, clientOptions);
  client.onDidChangeState((event) => {
    setState(event.newState === State.Running ? "running" : event.newState === State.Starting ? "starting" : "stopped");
  });
  setState("starting");
  try {
    await client.start();
  } catch (error) {
    setState("error");
    const message = `could not start \`${describeCommandLine(line)}\`: ${(error as Error).message}`;
    output.appendLine(message);
    void vscode.window.showErrorMessage(`dcomplete: ${message}`);
    return;
  }
  client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
    serverStatus = mergeStatus(serverStatus, parseStatus(params));
    refreshStatus();
  });
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    await running.stop().catch((error: unknown) => output.appendLine(`stop failed: ${String(error)}`));
  }
  setState("stopped");
}

async function restartServer(): Promise<void> {
  restarts.reset();
  await stopClient();
  serverStatus = {};
  await startClient();
}

async function onConfigurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
  const affects = (section: string) => event.affectsConfiguration(section);
  if (affectsServerCommand(affects) || event.affectsConfiguration("dcomplete.languages")) {
    await restartServer();
    return;
  }
  if (affectsServerSettings(affects) && client?.isRunning()) {
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: initializationOptions(readSettings()),
    });
  }
}

function setState(state: ClientState): void {
  clientState = state;
  refreshStatus();
}

function refreshStatus(): void {
  statusItem.text = statusText(clientState, serverStatus);
  statusItem.tooltip = statusTooltip(clientState, serverStatus);
}

function toLspRange(range: vscode.Range): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function activeEditorWithClient(): { editor: vscode.TextEditor; running: LanguageClient } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("dcomplete: no active editor");
    return undefined;
  }
  if (!client?.isRunning()) {
    void vscode.window.showErrorMessage("dcomplete: the server is not running (see the dcomplete output)");
    return undefined;
  }
  return { editor, running: client };
}

async function executeOnServer(running: LanguageClient, command: string, args: unknown[]): Promise<void> {
  try {
    await running.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  } catch (error) {
    void vscode.window.showErrorMessage(`dcomplete: ${command} failed: ${(error as Error).message}`);
  }
}

function selectedLines(editor: vscode.TextEditor): LspRange {
  const document = editor.document;
  return wholeLineRange(toLspRange(editor.selection), (line) => document.lineAt(line).text.length);
}

async function regenerateSelection(): Promise<void> {
  const target = activeEditorWithClient();
  if (!target) return;
  const uri = target.running.code2ProtocolConverter.asUri(target.editor.document.uri);
  await executeOnServer(target.running, SERVER_COMMANDS.regenerateSelection, regenerateArgs(uri, selectedLines(target.editor)));
}

async function fillHoles(): Promise<void> {
  const target = activeEditorWithClient();
  if (!target) return;
  const uri = target.running.code2ProtocolConverter.asUri(target.editor.document.uri);
  await executeOnServer(target.running, SERVER_COMMANDS.fillHoles, fillHolesArgs(uri));
}

async function askInstruction(): Promise<string | undefined> {
  const instruction = await vscode.window.showInputBox({
    prompt: "How should the selected code change?",
    placeHolder: "e.g. use pathlib instead of os.path",
  });
  return instruction === undefined || instruction.trim() === "" ? undefined : instruction;
}

async function refactorSelection(): Promise<void> {
  const target = activeEditorWithClient();
  if (!target) return;
  const instruction = await askInstruction();
  if (instruction === undefined) return;
  const uri = target.running.code2ProtocolConverter.asUri(target.editor.document.uri);
  const range = toLspRange(target.editor.selection);
  await executeOnServer(target.running, SERVER_COMMANDS.refactorSelection, refactorArgs(uri, range, instruction));
}
