"""Code actions, `workspace/executeCommand` arguments, and the workspace edits the commands apply.

Code actions only carry commands; the model runs when the user picks one, not when the menu opens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

import msgspec
from lsprotocol import types

from .completion import to_range
from .inference import Replacement
from .positions import Encoding

if TYPE_CHECKING:
    from infill.languages import LanguageSpec

REGENERATE_SELECTION = "dcomplete.regenerateSelection"
FILL_HOLES = "dcomplete.fillHoles"
REFACTOR_SELECTION = "dcomplete.refactorSelection"
ACCEPTED = "dcomplete.accepted"
COMMANDS = (REGENERATE_SELECTION, FILL_HOLES, REFACTOR_SELECTION, ACCEPTED)

HOLE_HINT = "<|hole"


class Position(msgspec.Struct, frozen=True):
    line: int
    character: int


class Range(msgspec.Struct, frozen=True):
    start: Position
    end: Position


class FillHolesArgs(msgspec.Struct, frozen=True):
    uri: str


class RegenerateArgs(msgspec.Struct, frozen=True):
    uri: str
    range: Range


class RefactorArgs(msgspec.Struct, frozen=True):
    """`instruction` is optional on the wire so the code action can leave it to the editor plugin to
    ask for; the server refuses to run without one."""

    uri: str
    range: Range
    instruction: str = ""


class AcceptedArgs(msgspec.Struct, frozen=True, rename="camel"):
    uri: str
    item_id: str


class BadCommandArguments(ValueError):
    pass


A = TypeVar("A", bound=msgspec.Struct)


def parse_arguments(command: str, arguments: tuple[object, ...], shape: type[A]) -> A:
    """The single object argument of `command` as `shape`, or a sentence naming what is wrong."""
    if len(arguments) != 1:
        raise BadCommandArguments(f"{command} takes one object argument, got {len(arguments)} arguments")
    try:
        return msgspec.convert(arguments[0], shape)
    except msgspec.ValidationError as error:
        raise BadCommandArguments(f"{command}: {error}") from None


def selected_lines(selection: Range) -> tuple[int, int]:
    """1-based inclusive lines of a selection; a selection ending at column 0 stops on the line above."""
    start, end = selection.start.line, selection.end.line
    if end > start and selection.end.character == 0:
        end -= 1
    return start + 1, max(start, end) + 1


def _command_action(title: str, command: str, argument: dict[str, object]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.RefactorRewrite,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def has_holes(text: str, language: str | LanguageSpec) -> bool:
    """Whether the file holds a hole marker (infill owns the syntax; the substring test skips the parse)."""
    if HOLE_HINT not in text:
        return False
    import infill

    try:
        return bool(infill.find_holes(text, language))
    except ValueError:  # an unsupported language, or a marker with a bad budget
        return False


def code_actions(
    uri: str, selection: types.Range, text: str, language: str | LanguageSpec, only: Sequence[str] | None
) -> list[types.CodeAction]:
    """The actions offered for a selection: regenerate/refactor need a non-empty selection, "fill
    holes" needs at least one hole marker in the file."""
    offered = types.CodeActionKind.RefactorRewrite.value
    if only and not any(offered.startswith(str(getattr(kind, "value", kind))) for kind in only):
        return []
    lsp_range = {
        "start": {"line": selection.start.line, "character": selection.start.character},
        "end": {"line": selection.end.line, "character": selection.end.character},
    }
    actions = []
    if selection.start != selection.end:
        actions.append(
            _command_action(
                "dcomplete: Regenerate selection", REGENERATE_SELECTION, {"uri": uri, "range": lsp_range}
            )
        )
        actions.append(
            _command_action(
                "dcomplete: Refactor selection with instruction…",
                REFACTOR_SELECTION,
                {"uri": uri, "range": lsp_range},
            )
        )
    if has_holes(text, language):
        actions.append(_command_action("dcomplete: Fill holes in file", FILL_HOLES, {"uri": uri}))
    return actions


def workspace_edit(
    uri: str, version: int, text: str, replacements: list[Replacement], encoding: Encoding, versioned: bool
) -> types.WorkspaceEdit:
    """One edit carrying every spot. `versioned` (client supports documentChanges) lets the client
    refuse it when the document moved on while the model ran."""
    edits = [
        types.TextEdit(to_range(text, r.start, r.end, encoding), r.new_text)
        for r in sorted(replacements, key=lambda r: r.start)
    ]
    if not versioned:
        return types.WorkspaceEdit(changes={uri: edits})
    document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, list(edits))])
