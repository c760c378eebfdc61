"""The engine away from the editor: the HTTP engine server (`remote.server`, `dcomplete engine`), its
client (`remote.client.RemoteEngine`, for the language server's `engineUrl` and the CLI's `--engine-url`)
and the Ray backend of `dcomplete refactor --ray` (`remote.ray_refactor`, `remote.ray_worker`).

Above `infill`, beside `lsp_server`; it imports neither `lsp_server` nor `cli` (both import it).
"""
