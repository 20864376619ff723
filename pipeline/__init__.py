"""gmeter's library: bundles, the DuckDB store, the metrics of four papers and the site builder.

The command line (``cli/``) is a thin skin over the use cases here: :mod:`pipeline.validate`,
:mod:`pipeline.ingest`, :mod:`pipeline.score`, :mod:`pipeline.site.build`, :mod:`pipeline.release`.
"""

__version__ = "0.3.0"
