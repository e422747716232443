"""``python -m surveykit`` runs the command line."""

from surveykit.cli import main

main(prog_name="surveykit")
