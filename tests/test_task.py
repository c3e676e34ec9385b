"""The task constants written once in evalcore.sst2.task, checked against the installed YAML that defines them."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from evalcore.errors import InvalidTypeError
from evalcore.sst2.task import CHOICES, TASK_VERSION, TASK_YAML, TEMPLATE, doc_to_text, requests_for


@pytest.fixture(scope="module")
def pinned_yaml():
    # The oracle is the file the harness reads, parsed here with a YAML parser, not evalcore's copy.
    return yaml.safe_load(files("lm_eval").joinpath(TASK_YAML).read_text(encoding="utf-8"))


def test_template_is_the_yamls_doc_to_text(pinned_yaml):
    assert TEMPLATE == pinned_yaml["doc_to_text"]


def test_choices_are_the_yamls_doc_to_choice(pinned_yaml):
    assert list(CHOICES) == pinned_yaml["doc_to_choice"] and pinned_yaml["doc_to_target"] == "label"


def test_task_version_is_the_yamls_metadata_version(pinned_yaml):
    assert float(TASK_VERSION) == pinned_yaml["metadata"]["version"]


def test_doc_to_text_renders_the_template_as_jinja_does():
    from jinja2 import Template  # the harness renders doc_to_text with Jinja

    for sentence in ["fine .", "a {{sentence}} inside", "ends with space ", ""]:
        assert doc_to_text(sentence) == Template(TEMPLATE).render(sentence=sentence)


def test_requests_pair_each_choice_with_the_delimiter():
    assert requests_for("ok .", "DEMO\n\n") == [
        ("DEMO\n\nok ." + TEMPLATE[len("{{sentence}}") :], " negative"),
        ("DEMO\n\nok ." + TEMPLATE[len("{{sentence}}") :], " positive"),
    ]


def test_non_text_sentence_refused():
    with pytest.raises(InvalidTypeError, match="sentence must be str, got int"):
        doc_to_text(3)
