"""Pure maths of the g-index paper (Venkatasubramanian et al. 2021): flows, Δ, Ω and the index."""
