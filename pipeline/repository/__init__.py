"""A benchmark repository: ``gmeter init`` writes one, ``gmeter site`` builds its site."""
