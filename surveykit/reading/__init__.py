"""Reading response files: one home for ``surveykit import`` and for counting files.

What a file is (told by its content, never its name), its CSV dialect and
encoding, spreadsheets and zipped exports, how its columns map to a survey
(names, group paths, question texts, the tool's metadata, the survey's
``[import]`` profile), and the rules every row and cell is read by. The
importer (:mod:`surveykit.store.importer`) and file counting
(:mod:`surveykit.counting`) both read through here, so a file counts as it
imports, or is refused for the same reason.

* :mod:`surveykit.reading.spreadsheets`: the kind of a file, workbooks' rows;
* :mod:`surveykit.reading.parquet`: Parquet rows, and the one rule for a typed cell's text;
* :mod:`surveykit.reading.exports`: what each field tool writes besides answers;
* :mod:`surveykit.reading.columns`: each column's role;
* :mod:`surveykit.reading.cells`: one cell's rules (ids, questions, groups, answers);
* :mod:`surveykit.reading.responses`: files as validated rows, in chunks.

Below the store and the workflows: nothing here touches a database.
"""
