"""Pure metric functions: typed inputs, typed results, no I/O, randomness only from explicit seeds."""
