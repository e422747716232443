"""Built from designs' privacy maps: composition, post-processing, budgets, trade-off bounds.

A design's own losses are its privacy map (:mod:`surveykit.designs.evidential`).
"""
