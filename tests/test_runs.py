"""evalcore.workflow.runs: the three kinds of run a comparison reads, each keyed by its rows' content."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest

from evalcore.errors import InvalidInputError, RecordError
from evalcore.records.store import read_record, write_record
from evalcore.workflow.compare import compare_runs
from evalcore.workflow.runs import read_run

ROOT = Path(__file__).resolve().parents[1]
PART3 = ROOT / "experiments" / "results" / "part3" / "a.json"
GOLDEN = ROOT / "records" / "golden-dev64"


def test_bad_run_names_are_refused_with_what_exists(tmp_path):
    with pytest.raises(InvalidInputError, match="no run at"):
        read_run(str(tmp_path / "nowhere"))
    with pytest.raises(InvalidInputError, match=r"no condition 'k=9'.*'set 2, k=2'"):
        read_run(f"{PART3}#k=9")
    with pytest.raises(InvalidInputError, match="scorer must be one of"):
        read_run(str(GOLDEN), scorer="harness")


def harness_output(where: Path, samples: list[dict], task: str = "mc") -> Path:
    """A harness output directory written by lm-eval's own tracker, as ``--output_path DIR/results.json
    --log_samples`` writes it."""
    from lm_eval.loggers import EvaluationTracker

    tracker = EvaluationTracker(output_path=str(where / "results.json"))
    with warnings.catch_warnings():  # lm-eval 0.4.9.2 writes its results file without closing it
        warnings.simplefilter("ignore", ResourceWarning)
        tracker.save_results_aggregated(results={"results": {}, "configs": {task: {"task": task}}, "config": {"m": 1}},
                                        samples={task: samples})  # fmt: skip
        gc.collect()
    tracker.save_results_samples(task, samples)
    assert len(list(where.glob("results_*.json"))) == len(list(where.glob("samples_*.jsonl"))) == 1  # it wrote both
    return where


def _sample(doc_id: int, doc: dict, scores: list[float], target: int) -> dict:
    return {"doc_id": doc_id, "doc": doc, "target": target, "arguments": [("ctx", f" {c}") for c in doc["choices"]],
            "resps": [[(s, False)] for s in scores], "filtered_resps": [(s, False) for s in scores],
            "doc_hash": "", "prompt_hash": "", "target_hash": "", "acc": 1.0}  # fmt: skip


@pytest.mark.slow
def test_harness_outputs_are_read_from_the_trackers_files_and_matched_by_document(tmp_path):
    docs = [{"question": f"q{i}", "choices": ["red", "green", "blue"], "answer": i % 3} for i in range(4)]
    scores = [[-1.5, -0.25, -3.0], [-0.5, -2.0, -1.0], [-2.0, -1.0, -0.125], [-0.75, -1.25, -2.5]]
    logged = [_sample(i, d, s, d["answer"]) for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
    first = harness_output(tmp_path / "first", logged)
    # the same documents logged in another order, under other doc_ids, one of them scored the other way
    other = {2: [-0.5, -1.0, -2.0]}
    moved = [_sample(9 - i, docs[i], other.get(i, scores[i]), docs[i]["answer"]) for i in (3, 2, 1, 0)]
    second = harness_output(tmp_path / "second", moved)
    a, b = read_run(str(first)), read_run(str(second))
    assert a.protocol == {"config": {"m": 1}, "task": {"task": "mc"}}
    result = compare_runs(a, b)
    assert result.paired.n == 4 and result.item_ids == [0, 1, 2, 3]  # A's doc_ids, A's order
    assert result.only_a == [2] and result.only_b == [] and result.ranking is None  # three choices: no AUC
    (samples_file,) = first.rglob("samples_mc_*.jsonl")
    assert read_run(str(samples_file)).items == a.items
    with pytest.raises(InvalidInputError, match="2 harness sample logs under it"):
        read_run(str(tmp_path))  # two logs below it: ambiguous, so the file must be named
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="neither a run record"):
        read_run(str(tmp_path / "empty"))


def test_a_run_records_non_finite_score_is_read_as_the_schema_stores_it(tmp_path):
    record = read_record(GOLDEN)
    del record["record_sha256"]
    item = next(i for i in record["items"] if i["independent"]["prediction"] == 1)
    item["independent"]["loglik"][0] = float("-inf")  # stored as the string "-inf": JSON has no spelling for it
    item["independent"]["token_logprobs"][0] = [float("-inf")]
    write_record(tmp_path, record)
    assert '"-inf"' in (tmp_path / "run.json").read_text(encoding="utf-8")
    assert read_run(str(tmp_path)).items[item["row_sha256"]][2][0] == float("-inf")


LOGGED = (
    '"arguments": {"gen_args_0": {"arg_0": "q", "arg_1": " a"}, "gen_args_1": {"arg_0": "q", "arg_1": " b"}}, '
    '"resps": [[["-1.0", "False"]], [["-2.0", "False"]]], "doc_hash": ""'
)
"""The fields a logged line needs besides its doc, doc_id and target (two requests, two scores)."""


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", r"samples_mc_1\.jsonl:1: not a logged sample"),
        (f'{{"doc": {{"q": 1}}, "target": "1", {LOGGED}}}', "doc_id"),
        (f'{{"doc": {{"q": 1}}, "doc_id": 3, "target": "x", {LOGGED}}}', r"samples_mc_1\.jsonl:1: .*integer target"),
        (
            '{"doc": {"q": 1}, "doc_id": 3, "target": "0", "arguments": {"gen_args_0": {"arg_0": "q", "arg_1": " a"}}, '
            '"resps": [["oops"]], "doc_hash": ""}',
            "resps is not one",
        ),
        ("", "no logged sample"),
    ],
)
def test_a_malformed_harness_log_is_refused_with_its_file_and_line(tmp_path, line, message):
    (tmp_path / "samples_mc_1.jsonl").write_text(line + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=message):
        read_run(str(tmp_path))


def test_a_broken_results_file_beside_the_log_is_refused(tmp_path):
    logged = f'{{"doc": {{"q": 1}}, "doc_id": 0, "target": "0", {LOGGED}}}'
    (tmp_path / "samples_mc_1.jsonl").write_text(logged + "\n", encoding="utf-8")
    (tmp_path / "results_1.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(RecordError, match=r"results_1\.json: not the harness's results JSON"):
        read_run(str(tmp_path))


def test_a_run_record_of_one_candidate_per_item_is_refused(tmp_path):
    # The schema and the record checks let one candidate through; a comparison of argmaxes needs two.
    record = read_record(GOLDEN)
    del record["record_sha256"]
    for item in record["items"]:
        for side in ("official", "independent"):
            entry = item[side]
            for key in ("loglik", "continuation_sha256", "is_greedy", "token_logprobs", "continuation_ids"):
                if key in entry:
                    entry[key] = entry[key][:1]
    write_record(tmp_path, record)
    with pytest.raises(RecordError, match=r"item \d+ \(independent\): candidate scores must be a list of two numbers"):
        read_run(str(tmp_path))
