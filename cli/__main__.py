"""``python -m cli`` runs gmeter."""

from cli.app import main

main()
