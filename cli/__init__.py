"""The ``gmeter`` command line: a thin typer skin over :mod:`pipeline` use cases."""
