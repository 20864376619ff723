"""``gmeter check``: validation, integrity checks and score changes of a pull request."""
