"""Pure maths of the AIQ paper (Legg & Veness 2013): BF machine, agents, sampler, estimator."""
