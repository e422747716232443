"""Estimating prevalences from randomized answers."""
