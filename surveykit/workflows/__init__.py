"""Workflows: the one place that joins the store, the computations and files.

The CLI calls workflows; the packages below them (store, estimation,
reporting, collection) do not import each other's I/O through here.
"""
