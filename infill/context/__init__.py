"""Repository context: code from the rest of the project, put at the top of a canvas.

`ContextBuilder.build` returns a `RepoContext` whose `header` goes into `FillOptions.context` (the canvas's
uncropped header, above the window). Three sources, ranked, then trimmed to a token budget:
- `definitions`: what the current file imports from the workspace (`from .x import f`, `import pkg.mod`),
  resolved with tree-sitter to the definitions' signatures and docstrings, a class with its fields;
- `recent`: chunks of documents the user recently viewed or edited (`ContextBuilder.saw`, a bounded ring),
  ranked by the Jaccard similarity of their identifiers to those around the cursor;
- `outline`: signatures of the current file's own functions and classes that the window cuts off.

The kept chunks are written in a fixed order (source, path, position), not by score, and a document keeps
its chunk set while nothing it was built from changes (`builder.HOLD_LINES`): the same set gives the same
tokens, so the engine's exact prefix cache covers them from one keystroke to the next.
"""

from infill.context.builder import ContextBuilder, RepoContext
from infill.context.chunks import Chunk
from infill.context.projects import Builders
from infill.context.roots import repo_root

__all__ = ["Builders", "Chunk", "ContextBuilder", "RepoContext", "repo_root"]
