"""`dcomplete engine`: one engine shared by many editors over HTTP.

Speaks the completion APIs editor plugins already call (OpenAI `/v1/completions` with `suffix`,
`/v1/fim/completions`, llama.cpp's `/infill`) plus the native multi-spot `/v1/infill`, which also takes
ready canvases of token ids from a language server that keeps the documents next to the editor.

The stack: Litestar on uvicorn with uvloop. Litestar is a maintained ASGI framework built around msgspec,
the project's type library, so bodies decode straight into msgspec structs and a wrong field becomes a
400 naming it; uvicorn is the reference ASGI server and runs uvloop as its event loop. The engine itself
runs in one thread behind `engine.batcher.Batcher`; request threads wait for their rows' batch.

Modules: `schemas` (bodies), `service` (what the endpoints do, on plain values, through `infill`),
`document_form` (the native document form), `bounds` (text cut to what the model's context can reach before
it is parsed or tokenized), `compat_apis` (the OpenAI / llama.cpp request shapes other plugins speak),
`metrics` (Prometheus), `app`
(routes, errors, auth, and the `Ticket` of each request: `infill.tickets`); the subcommand that starts it
is `cli.engine_command`.
"""
