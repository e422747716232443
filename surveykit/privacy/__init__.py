"""Privacy losses of randomized-response designs (the paper's Shafer and Walley semantics)."""
