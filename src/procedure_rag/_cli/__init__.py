"""The ``procedure-rag`` command line: subcommands, the offline demo, the HTML view."""
