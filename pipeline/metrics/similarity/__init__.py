"""Pure maths of the test-similarity paper (Pereyda & Holder 2020): eq. 3, suites and maps."""
