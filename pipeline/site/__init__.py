"""The static site: the store snapshot, page models, charts, templates, exports and the build."""
