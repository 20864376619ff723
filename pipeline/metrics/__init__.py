"""Pure metric functions: typed inputs and results, no I/O, randomness only from explicit seeds."""
