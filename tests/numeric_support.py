"""Survey files with numeric questions (issue 23) for tests, built from the parts they share: a
yes/no question with Warner's design and an income question with Eriksson's cards and a
"don't know" branch, under a ``name``/``title`` head. Each test file composes its survey
from these and writes out only what makes it its own (markup in a text, a third question).

>>> print(numeric_survey(choice_question(), title="Tax"), end="")
name = "tax"
title = "Tax"
[[questions]]
id = "cheat"
text = "Ever cheated?"
[questions.design]
model = "warner"
p = 0.7
"""

from __future__ import annotations

#: The income question's design: Eriksson's cards, "don't know" with probability 0.1.
ERIKSSON_INCOME_DESIGN = '''[questions.design]
model = "eriksson"
p = 0.6
scrambler = [0, 1000, 5000, 20000]
dont_know = 0.1
'''


def numeric_survey(*questions: str, name: str = "tax", title: str = "Tax",
                   head: str = "") -> str:
    """A survey file: ``name``, ``title``, then ``head`` (more top-level keys and tables),
    then the questions."""
    return f'name = "{name}"\ntitle = "{title}"\n{head}' + "".join(questions)


def choice_question(id: str = "cheat", text: str = "Ever cheated?", p: float = 0.7) -> str:
    """A yes/no question with Warner's design."""
    return (f'[[questions]]\nid = "{id}"\ntext = "{text}"\n[questions.design]\n'
            f'model = "warner"\np = {p}\n')


def income_question(id: str = "income", text: str = "How much did you not declare?",
                    unit: str | None = "EUR", decimals: int = 0) -> str:
    """A numeric question from 0 to 100000 with :data:`ERIKSSON_INCOME_DESIGN` (``text`` and
    ``unit`` go into the file as they are: TOML escapes are the caller's)."""
    unit_line = "" if unit is None else f'unit = "{unit}"\n'
    return (f'[[questions]]\nid = "{id}"\ntext = "{text}"\ntype = "number"\n'
            f'range = [0, 100000]\n{unit_line}decimals = {decimals}\n' + ERIKSSON_INCOME_DESIGN)


def hours_question(text: str = "How many hours a week off the books?",
                   unit: str | None = None) -> str:
    """A numeric question from 0 to 40 with one decimal and Bar-Lev's design."""
    unit_line = "" if unit is None else f'unit = "{unit}"\n'
    return (f'[[questions]]\nid = "hours"\ntext = "{text}"\ntype = "number"\nrange = [0, 40]\n'
            f'{unit_line}decimals = 1\n[questions.design]\nmodel = "bar_lev"\np = 0.5\n'
            'scrambler = [0.5, 1.5]\n')


def api_score_question(text: str = "What was the school's API score in 2000, divided by 100?"
                       ) -> str:
    """The api data's school score (api00 / 100, R survey's ``api``) as a numeric question
    with Eriksson's cards, for the sampled-survey tests."""
    return (f'[[questions]]\nid = "score"\ntext = "{text}"\ntype = "number"\nrange = [0, 10]\n'
            'decimals = 2\n[questions.design]\nmodel = "eriksson"\np = 0.6\n'
            'scrambler = [0, 1, 3, 5, 8]\ndont_know = 0.1\n')
