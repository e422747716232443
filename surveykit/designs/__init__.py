"""Randomized-response designs: what respondents are told and P(response | true state)."""
