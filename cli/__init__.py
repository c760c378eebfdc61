"""The `dcomplete` command line: one module per subcommand, registered in `cli.main.SUBCOMMANDS`.

It sits above every other package (it starts the language server for `dcomplete serve` and the HTTP
engine server for `dcomplete engine`), so nothing but the entry point imports it.
"""
