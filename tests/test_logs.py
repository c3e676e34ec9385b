"""Reading and writing a harness output directory (``evalcore.harness.logs``)."""

from __future__ import annotations

import json

import pytest

from evalcore.errors import InvalidInputError, RecordError
from evalcore.harness.logs import find_logs, harness_doc_hash, read_log, write_logs


def _line(**change) -> str:
    sample = {"doc_id": 3, "doc": {"q": "x", "idx": 3}, "target": 1, "doc_hash": "h",
              "arguments": {"gen_args_0": {"arg_0": "ctx", "arg_1": " a"},
                            "gen_args_1": {"arg_0": "ctx", "arg_1": " b"}},
              "resps": [[["-1.5", "False"]], [["-0.25", "True"]]]}  # fmt: skip
    sample.update(change)
    return json.dumps(sample)


def test_a_samples_file_is_read_with_its_requests_scores_and_results(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "samples_mc_2026-01-01T00-00-00.0.jsonl").write_text(_line() + "\n\n" + _line(doc_id=4) + "\n")
    (tmp_path / "m" / "results_2026-01-01T00-00-00.0.json").write_text(
        json.dumps({"configs": {"mc": {"task": "mc"}}, "n-shot": {"mc": 2}, "config": {"fewshot_seed": 7}})
    )
    [log] = find_logs(tmp_path)
    assert (log.task, log.num_fewshot, log.run_config["fewshot_seed"], log.task_config) == ("mc", 2, 7, {"task": "mc"})
    first, second = log.samples
    assert (first.line, second.line, second.doc_id) == (1, 3, 4)  # blank lines skipped, numbering kept
    assert first.requests == (("ctx", " a"), ("ctx", " b")) and first.scores == (-1.5, -0.25) and first.target == "1"


def test_the_doc_hash_is_the_harness_s():
    from lm_eval.utils import handle_non_serializable

    from evalcore.protocol.digest import sha256_text

    doc = {"sentence": "caf\u00e9 au lait", "label": 1, "idx": 7}
    harness = sha256_text(json.dumps(doc, indent=2, default=handle_non_serializable, ensure_ascii=False))
    assert harness_doc_hash(doc) == harness and harness_doc_hash({**doc, "idx": 8}) != harness


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{", "not a logged sample"),
        (_line(doc_id="3"), "integer doc_id"),
        (_line(arguments=[["ctx", " a"]]), "arguments is not the tracker's"),
        (_line(arguments={"gen_args_0": {"arg_0": "ctx"}}), "gen_args_0 is not a \\(context, continuation\\) pair"),
        (_line(arguments={"gen_args_0": ["ctx", " a"]}), "gen_args_0 is not a \\(context, continuation\\) pair"),
        (_line(resps=[["x"]]), "resps is not one"),
        (_line(resps=[[["-1.5", "False"]]]), "2 requests but 1 responses"),
        (_line(resps=[[["nan", "False"]], [["-1.0", "False"]]]), "a NaN log-likelihood"),
    ],
)
def test_a_malformed_line_is_refused_with_file_and_line(tmp_path, line, message):
    path = tmp_path / "samples_mc_2026-01-01.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(RecordError, match=rf"samples_mc_2026-01-01\.jsonl:1: .*{message}"):
        read_log(path)


def test_names_results_and_directories_the_tracker_does_not_write_are_refused(tmp_path):
    with pytest.raises(InvalidInputError, match="not a tracker's samples"):
        read_log(tmp_path / "log.jsonl")
    empty = tmp_path / "samples_mc_2026-01-01.jsonl"
    empty.write_text("\n")
    with pytest.raises(RecordError, match="no logged sample"):
        read_log(empty)
    empty.write_text(_line() + "\n")
    (tmp_path / "results_2026-01-01.json").write_text("[1]")
    with pytest.raises(RecordError, match="not the harness's results JSON"):
        read_log(empty)
    with pytest.raises(InvalidInputError, match="no directory"):
        find_logs(tmp_path / "absent")


@pytest.mark.slow
def test_written_logs_read_back_as_the_tracker_wrote_them_and_the_output_is_untouched(tmp_path):
    sample = {"doc_id": 0, "doc": {"q": "x"}, "target": 0, "arguments": [("ctx", " a"), ("ctx", " b")],
              "resps": [[(-1.0, False)], [(-2.0, False)]], "filtered_resps": [(-1.0, False), (-2.0, False)],
              "doc_hash": harness_doc_hash({"q": "x"}), "prompt_hash": "", "target_hash": "", "acc": 1.0}  # fmt: skip
    output = {"results": {"mc": {"acc,none": 1.0}}, "configs": {"mc": {"task": "mc"}}, "samples": {"mc": [sample]}}
    before = json.dumps(output, sort_keys=True)
    [log] = find_logs(write_logs(output, tmp_path))
    assert json.dumps(output, sort_keys=True) == before  # the tracker rewrote a copy
    assert log.samples[0].requests == (("ctx", " a"), ("ctx", " b")) and log.samples[0].scores == (-1.0, -2.0)
    with pytest.raises(InvalidInputError, match="log_samples=True"):
        write_logs({"results": {}}, tmp_path)


def test_numpy_integers_and_sets_hash_as_the_harness_s_fallback_writes_them():
    import numpy as np
    from lm_eval.utils import handle_non_serializable

    from evalcore.protocol.digest import sha256_text

    doc = {"idx": np.int64(3), "n": np.int32(4), "tags": {"a"}, "other": 1.5}
    harness = sha256_text(json.dumps(doc, indent=2, default=handle_non_serializable, ensure_ascii=False))
    assert harness_doc_hash(doc) == harness


def test_a_generation_task_s_log_is_refused_with_that_reason(tmp_path):
    path = tmp_path / "samples_gen_2026-01-01.jsonl"
    path.write_text(_line(arguments={"gen_args_0": {"arg_0": "Q:", "arg_1": {"until": ["\n"]}}}) + "\n")
    with pytest.raises(RecordError, match="a generation task's log"):
        read_log(path)
    path.write_text(_line(resps=[["a free-text answer"]]) + "\n")
    with pytest.raises(RecordError, match="a generation task's log"):
        read_log(path)
