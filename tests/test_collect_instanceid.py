"""The limit of ``--randomize device`` on ODK Collect, reproduced rather than asserted.

JavaRosa (ODK Collect, KoboCollect) fills meta/instanceID and evaluates random()
with one java.util.Random (tests/java_random.py says where in JavaRosa). The
instanceID travels with every submission; from it alone we recover the
generator's state and predict every draw of the form, hence the rule each
respondent was shown. ODK Web Forms takes the instanceID from crypto.randomUUID,
so the same attack finds nothing there. docs/field-collection.md cites this test.
"""

from __future__ import annotations

import time

import pytest
from field_clients import JavaRosa, WebForms, convert_many, leaves
from java_random import JavaRandom, recover_state
from test_xlsform_clients import CASES, _expected_rule

from surveykit.collection.xlsform import build_xlsform, write_xlsform

CASE = CASES["sample-device"]
# One Collect session filling three forms in a row, as a field worker does.
RUNS = 3


@pytest.fixture(scope="module")
def device_xform(tmp_path_factory):
    folder = tmp_path_factory.mktemp("instanceid")
    form = build_xlsform(CASE.survey, randomize="device", wording_defaults=CASE.wording)
    xlsform = write_xlsform(form, folder / "device.xlsx")
    # pyxform, then ODK Validate (convert_many: one form, in a JVM started to be brief)
    assert convert_many({xlsform: folder / "device.xml"}) == {xlsform: []}
    return folder / "device.xml"


def test_collect_draws_are_recovered_from_the_instance_id_alone(device_xform, tmp_path):
    fills = JavaRosa.shared().fill(device_xform, tmp_path, CASE.answers, runs=RUNS)
    questions = [q.id for q in CASE.survey.questions]
    for fill in fills:
        submitted = leaves(fill.submission)
        assert not [name for name in submitted if name.endswith("_draw")]
        started = time.perf_counter()
        state = recover_state(submitted["instanceID"])
        # how long the attack takes is reported, not asserted (no timed assertions)
        print(f"state recovered in {time.perf_counter() - started:.2f} s")
        assert state is not None, submitted["instanceID"]
        # The first-load draws follow the uuid, in form order: predict them all.
        generator = JavaRandom(state=state)
        predicted = {question: generator.next_double() for question in questions}
        drawn = {name[:-len("_draw")]: float(value)
                 for name, value in leaves(fill.start).items() if name.endswith("_draw")}
        assert predicted == drawn
        # ... and so the rule every respondent was shown, which undoes the randomization.
        shown = fill.shown("fill")
        for question in questions:
            [rule] = [text for name, text in shown.items()
                      if name.startswith(f"{question}_rule_")]
            assert rule.endswith(_expected_rule(CASE, question, predicted[question]))


def test_web_forms_instance_ids_do_not_reveal_the_draws(device_xform, tmp_path):
    fills = WebForms().fill(device_xform, tmp_path, CASE.answers, runs=RUNS)
    for fill in fills:
        assert recover_state(leaves(fill.submission)["instanceID"]) is None
