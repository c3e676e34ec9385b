"""Graded exercises of the getting-started chapters and of Part IV, checked against evalcore and its records.

Explained in the chapters *Running the book* (``book/running-the-book.md``), *The chain at a glance*
(``book/the-chain.md``), *When inputs go wrong* (``book/refusals.md``), *How fast is it?*
(``book/performance.md``) and *Where the time goes* (``book/performance-time.md``). Each check computes
the right answer with evalcore's tools or from a stored record; :func:`run_command` runs the command line.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader
from evalbook_pages.speed import best_batch_sizes, ratio_range
from evalcore.harness.official import HARNESS_VERSION
from evalcore.models.loader import DEFAULT_MODEL, MODELS
from evalcore.protocol.digest import sha256_text
from evalcore.records.schema import record_digest
from evalcore.sst2.selection import DEV_SIZE, SALT, VALIDATION_SIZE, confirm_ids, dev_ids, hash_order

__all__ = [
    "OTHER_SALT",
    "check_exit_statuses",
    "check_misfiled",
    "check_pinned_versions",
    "check_salted_order",
    "check_speedup",
    "check_time_shares",
    "command_cases",
    "run_command",
]

OTHER_SALT = SALT.replace("v1", "v2")
"""The salt of the exercise in *The chain at a glance*: the committed one, one character changed."""

PREFIX_DIGITS = 12  # hex digits of a SHA-256 that the running-the-book exercise asks for


@grader
def check_pinned_versions(torch_version: Any, lm_eval_version: Any, model_sha256_prefix: Any, record: Any) -> str:
    """*Running the book*: the torch build, the lm-eval release and the model file's SHA-256 of ``record``.

    The right answers are read from the record (``resources.packages`` and the protocol)
    and compared with what evalcore pins (:data:`evalcore.harness.official.HARNESS_VERSION`
    and the default model's SHA-256).

    Args:
        torch_version, lm_eval_version, model_sha256_prefix: the reader's answers.
        record: a run record, as :func:`evalcore.records.store.read_record` returns it.

    Returns:
        A verdict that starts with ``correct``.

    Raises:
        WrongAnswer: an answer differs from the record; the message says where to look.
    """
    torch_version, lm_eval_version = given("torch_version", torch_version), given("lm_eval_version", lm_eval_version)
    prefix = str(given("model_sha256_prefix", model_sha256_prefix)).lower()
    packages, protocol = record["resources"]["packages"], record["protocol"]
    torch = packages["torch"]
    if torch_version != torch:
        if isinstance(torch_version, str) and torch.startswith(torch_version + "+"):
            raise WrongAnswer(f"{torch_version!r} is the version the lock pins; the record names the build that ran, "
                              "with its local label after '+'")  # fmt: skip
        raise WrongAnswer(f"torch_version {torch_version!r}: look in the record's resources, under packages")
    lm_eval = protocol["harness"]["version"]
    if lm_eval_version != lm_eval:
        raise WrongAnswer(f"lm_eval_version {lm_eval_version!r}: the protocol's harness section names the release")
    sha = protocol["model"]["file_sha256"]
    if len(prefix) < PREFIX_DIGITS:
        raise WrongAnswer(f"give the first {PREFIX_DIGITS} hex digits of the SHA-256, not {len(prefix)}")
    others = {"the protocol's fingerprint": record["fingerprint"], "the record's own digest": record["record_sha256"],
              "the validation data's digest": protocol["data"]["digest"]}  # fmt: skip
    for what, digest in others.items():
        if digest.startswith(prefix):
            raise WrongAnswer(f"that is {what}, not the model file's SHA-256")
    if not sha.startswith(prefix):
        raise WrongAnswer("that prefix is no SHA-256 in the record: look under protocol, model")
    pinned = MODELS[DEFAULT_MODEL].sha256
    same = "the ones evalcore pins" if (lm_eval, sha) == (HARNESS_VERSION, pinned) else "NOT the ones evalcore pins"
    return f"correct: torch {torch}, lm-eval {lm_eval}, model file {sha[:PREFIX_DIGITS]}…: {same}"


@grader
def check_salted_order(first_three: Any, kept: Any, salt: str = OTHER_SALT) -> str:
    """*The chain at a glance*: the first three dev ids under another ``salt``, and how many dev ids stay dev ids.

    Computed with :func:`evalcore.sst2.selection.hash_order`.

    Args:
        first_three, kept: the reader's answers (a list of three idx, a count).
        salt: the changed salt.

    Returns:
        A verdict that starts with ``correct``.

    Raises:
        WrongAnswer: a wrong answer; the message names the usual slip it matches.
        ValueError: ``salt`` is the committed salt, which the exercise changes.
    """
    first_three, kept = given("first_three", first_three), given("kept", kept)
    if salt == SALT:
        raise ValueError("the exercise needs a salt other than the committed one")
    order = hash_order(salt=salt)
    first_three = list(first_three) if isinstance(first_three, tuple) else first_three
    if first_three != order[:3]:
        hints = [(dev_ids()[:3], "these are the dev items of the committed salt: hash with the new one"),
                 (sorted(order[:DEV_SIZE])[:3], "these are the new dev set's smallest ids: keep the keys' order"),
                 (order[::-1][:3], "these have the largest keys: the order sorts the keys from the smallest"),
                 (sorted(range(VALIDATION_SIZE), key=lambda i: sha256_text(f"{salt}{i}"))[:3],
                  "each key hashes the salt, a colon and the idx")]  # fmt: skip
        hint = next((h for ids, h in hints if first_three == ids), "sort every idx by sha256(f'{salt}:{idx}')")
        raise WrongAnswer(f"first_three {first_three!r}: {hint}")
    shared = len(set(dev_ids()) & set(order[:DEV_SIZE]))
    if kept != shared:
        why = "a new salt draws a new order, so most dev items change; " if kept == DEV_SIZE else ""
        raise WrongAnswer(f"kept {kept!r}: {why}count the ids in both dev sets, the first {DEV_SIZE} of each order")
    chance = DEV_SIZE * DEV_SIZE / VALIDATION_SIZE
    return f"correct: {order[:3]} come first; {shared} of {DEV_SIZE} dev items stay (chance alone: {chance:.1f})"


def command_cases(scratch: str | Path, golden_dir: str | Path) -> dict[str, list[str]]:
    """Six bad inputs to the ``evalcore`` command, as argument lists; their files are made in ``scratch``.

    ``edited`` is a copy of the golden record with one official score raised by 0.5,
    its digest not recomputed; ``redigested`` the same copy with the digest recomputed.

    Args:
        scratch: a directory for the damaged copies (made if missing).
        golden_dir: the golden record's directory.

    Returns:
        ``{case: argv}`` for :func:`run_command`.
    """
    scratch = Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    record = json.loads((Path(golden_dir) / "run.json").read_text(encoding="utf-8"))
    edited = copy.deepcopy(record)
    edited["items"][0]["official"]["loglik"][0] += 0.5
    for name in ("edited", "redigested"):
        edited["record_sha256"] = record_digest(edited) if name == "redigested" else record["record_sha256"]
        (scratch / name).mkdir(exist_ok=True)
        (scratch / name / "run.json").write_text(json.dumps(edited), encoding="utf-8")
    (scratch / "a-file").write_text("not a directory\n", encoding="utf-8")
    out = str(scratch / "out")
    return {
        "ids-twice": ["run", "--smoke", "--items", "13", "13", "--out", out],
        "sealed-id": ["run", "--smoke", "--items", str(confirm_ids()[0]), "--out", out],
        "level-4": ["audit", str(scratch / "redigested"), "--level", "4"],
        "edited": ["audit", str(scratch / "edited"), "--level", "1"],
        "redigested": ["audit", str(scratch / "redigested"), "--level", "1"],
        "out-under-a-file": ["run", "--smoke", "--items", "13", "--out", str(scratch / "a-file" / "run")],
    }


def run_command(argv: Sequence[str]) -> tuple[str | None, int]:
    """Run ``evalcore ARGV`` in this process.

    Args:
        argv: the command's arguments, without ``evalcore``.

    Returns:
        The error class it names on standard error (None for none, as after a usage
        error), and its exit status.
    """
    from evalcore.workflow.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
    named = [line[7:].split(":", 1)[0] for line in err.getvalue().splitlines() if line.startswith("error: ")]
    return (named[-1] if named else None), status


def _status_hint(wrong: Any, right: int) -> str:
    hints = {3: "the directory cannot be made: the system refused (an OSError evalcore did not decide)",
             1: "the digest matches, so the record is read, and level 1 of the audit then finds a problem"}  # fmt: skip
    if right not in hints and wrong == 1:
        return "1 means a check ran and found a problem; this input is refused before any check runs"
    return hints.get(right, f"a refusal by evalcore exits with {right}")


@grader
def check_exit_statuses(predicted: Any, cases: Mapping[str, Sequence[str]]) -> str:
    """*When inputs go wrong*: ``predicted`` maps each case of :func:`command_cases` to ``(error class, status)``.

    Args:
        predicted: the reader's answer.
        cases: :func:`command_cases`; every case is run with :func:`run_command`.

    Returns:
        A verdict that starts with ``correct``.

    Raises:
        WrongAnswer: a case's class or status differs; the message says why.
    """
    predicted = given("predicted", predicted)
    if not isinstance(predicted, Mapping) or set(predicted) != set(cases):
        raise WrongAnswer(f"predicted must map exactly these cases: {', '.join(cases)}")
    actual = {case: run_command(argv) for case, argv in cases.items()}
    for case, (name, status) in actual.items():
        if not isinstance(guess := predicted[case], Sequence) or isinstance(guess, str) or len(guess) != 2:
            raise WrongAnswer(f"{case}: give a pair (error class name or None, exit status)")
        if guess[1] != status:
            raise WrongAnswer(f"{case}: exit status {guess[1]!r} is wrong: {_status_hint(guess[1], status)}")
        if guess[0] != name:
            if name is None:
                why = "argparse refuses the usage" if status == 2 else "the audit ran and found a problem"
                raise WrongAnswer(f"{case}: {why}, and no error class is named (None)")
            raise WrongAnswer(f"{case}: {guess[0]!r} is not the class it names; it is one of evalcore's own, "
                              "or the system's for status 3")  # fmt: skip
    shown = "; ".join(f"{case} {name} {status}" for case, (name, status) in actual.items())
    return f"correct: {shown}"


def _near(a: Any, b: float, tol: float) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and abs(a - b) <= tol


@grader
def check_speedup(speedup: Any, speedup_range: Any, clearly_faster: Any, fair: Mapping[str, Any]) -> str:
    """*How fast is it?*: evalcore at batch size 8 against the harness at its best, from the fair record.

    ``speedup`` is the ratio of the medians, ``speedup_range`` the pair of
    :func:`evalbook_pages.speed.ratio_range` over the repeats, ``clearly_faster`` whether
    that whole range lies above 1.

    Args:
        speedup, speedup_range, clearly_faster: the reader's answers.
        fair: the fair benchmark's record (``benchmarks/results/fair.json``).

    Returns:
        A verdict that starts with ``correct``.

    Raises:
        WrongAnswer: an answer off by more than the rounding allowed; the message says why.
    """
    speedup, speedup_range = given("speedup", speedup), given("speedup_range", speedup_range)
    clearly_faster = given("clearly_faster", clearly_faster)
    median, runs = fair["median"], fair["items_per_s"]
    best = best_batch_sizes(median)["harness"]
    right = median["evalcore"]["8"] / median["harness"][best]
    if not _near(speedup, right, 0.005):
        if _near(speedup, median["evalcore"]["8"] / median["harness"]["8"], 0.005) and best != "8":
            raise WrongAnswer(f"that divides by the harness at batch size 8; its best is batch size {best}")
        if _near(speedup, 1 / right, 0.005):
            raise WrongAnswer("that is the harness's speed over evalcore's: put evalcore on top")
        raise WrongAnswer(f"speedup {speedup!r}: divide evalcore's median at batch size 8 by the harness's best median")
    low, high = ratio_range(runs["evalcore"]["8"], runs["harness"][best])
    if not isinstance(speedup_range, Sequence) or len(speedup_range) != 2:
        raise WrongAnswer("speedup_range is a pair (low, high)")
    if not (_near(speedup_range[0], low, 0.005) and _near(speedup_range[1], high, 0.005)):
        raise WrongAnswer("the range divides evalcore's slowest repeat by the harness's fastest, and the reverse")
    if clearly_faster is not (low > 1):
        raise WrongAnswer("clearly_faster holds only when even the lowest ratio over the repeats is above 1")
    return f"correct: {right:.2f} times as fast, from {low:.2f} to {high:.2f} over the repeats"


@grader
def check_time_shares(runner_up: Any, gain: Any, fair: Mapping[str, Any]) -> str:
    """*Where the time goes*: the harness's largest group after the linear layers, and Amdahl's bound.

    ``gain`` is how many times as fast the harness's profiled run would be if its
    vocabulary projection and its log-softmax took no time.

    Args:
        runner_up, gain: the reader's answers.
        fair: the fair benchmark's record, with its profiled ``time_shares``.

    Returns:
        A verdict that starts with ``correct``.

    Raises:
        WrongAnswer: a wrong group or gain; the message names the slip it matches.
    """
    runner_up, gain = given("runner_up", runner_up), given("gain", gain)
    shares = {g: v["share"] for g, v in fair["time_shares"]["harness"]["groups"].items()}
    ranked = sorted((g for g in shares if g != "linear layers"), key=lambda g: -shares[g])
    if runner_up != ranked[0]:
        evalcore = fair["time_shares"]["evalcore"]["groups"]
        if runner_up == max((g for g in evalcore if g != "linear layers"), key=lambda g: evalcore[g]["share"]):
            raise WrongAnswer(f"{runner_up!r} comes second for evalcore: read the harness's column")
        raise WrongAnswer(f"{runner_up!r} is not the harness's largest group after the linear layers")
    removed = shares["vocabulary projection"] + shares["log-softmax"]
    right = 1 / (1 - removed)
    if not _near(gain, right, 0.01):
        if _near(gain, 1 + removed, 0.01):
            raise WrongAnswer("that adds the share; the time left is 1 - share, and the speed-up is its inverse")
        if _near(gain, 1 / (1 - shares["vocabulary projection"]), 0.01):
            raise WrongAnswer("remove the log-softmax's share too")
        raise WrongAnswer(f"gain {gain!r}: 1 / (1 - the two groups' shares of the wall time)")
    return f"correct: {ranked[0]}; without it and the log-softmax ({100 * removed:.1f} %), {right:.2f} times as fast"


@grader
def check_misfiled(moved: Any, directory: str | Path) -> str:
    """*Auditing your own runs*: the bugged run's misfiled lines, read from its samples file.

    Args:
        moved: the reader's answer, ``{logged doc_id: the index of the document on that line}``.
        directory: the bugged run's output directory.

    Returns:
        A verdict that starts with ``correct``.

    Raises:
        WrongAnswer: not a dict, or other lines; the message names the slip it matches.
    """
    from evalcore.harness.logs import find_logs

    moved = given("moved", moved)
    if not isinstance(moved, Mapping):
        raise WrongAnswer(f"moved must be a dict from logged doc_id to document index, got {type(moved).__name__}")
    [log] = find_logs(directory)
    every = {s.doc_id: s.doc["idx"] for s in log.samples}
    right = {i: idx for i, idx in every.items() if i != idx}
    answer = dict(moved)
    if answer == right:
        return f"correct: {len(right)} of {len(every)} lines hold another document than their doc_id names"
    if answer == {idx: i for i, idx in right.items()}:
        raise WrongAnswer("that maps each document to the doc_id it was filed under: key by the logged doc_id")
    if answer == every:
        raise WrongAnswer("keep only the lines whose doc_id differs from their document's index")
    raise WrongAnswer(f"{len(answer)} entries; compare each line's doc_id with its doc['idx']")
