"""`ct tui`: a read-only terminal interface over the SDK client (Textual, the optional `tui` extra).

Nothing in this package is imported by `ct --help` or by any other command: `ct_cli.commands.tui`
imports `ct_cli.tui.app` only once it has checked that Textual is installed. The modules without
Textual (`format`, `tail`, `cache`) hold the rules the screens show, so they are tested on their own.
"""
