"""Command line: ``evalcore prepare | run | audit | compare`` (also ``python -m evalcore``).

``evalcore --version`` prints the package's version; ``-v`` shows evalcore's log on
standard error (what was loaded from where, and where the record was written).

Explained in the notebook *Running the official harness*. Every command calls the
same functions the notebooks call. ``run --items`` takes ``dev`` (the 64 dev items,
the default), ``confirm`` (the 128 sealed items: refused without ``--unseal``, and an
unsealed run says so in its record), ``validation`` (all 872, confirm items included,
so also only with ``--unseal``) or a list of validation ids. ``compare A B`` reports the
paired statistics of two runs, each a run record or one condition of a Part III record
(``FILE.json#CONDITION``), matched item by item by row content
(:mod:`evalcore.workflow.compare`).

Exit status (:data:`evalcore.errors.EXIT_CODES`): 0 success; 1 the check ran and found
a problem; 2 refused: a usage error or any :class:`~evalcore.errors.EvalcoreError`,
with what and why; 3 the system refused (an ``OSError``: permission, disk, path);
130 interrupted by SIGINT (Ctrl-C) and 143 by SIGTERM, whatever exception the interruption
surfaced as, and however many signals arrived.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from evalcore.errors import EXIT_CODES, EvalcoreError, InvalidInputError
from evalcore.models.loader import DEFAULT_MODEL, MODELS
from evalcore.workflow.interrupt import EXIT_BY_SIGNAL, signal_watch

__all__ = ["ITEM_SETS", "build_parser", "entry", "main", "resolve_items"]


def _prepare(args: argparse.Namespace) -> int:
    from evalcore.extras import require_run_extra
    from evalcore.models.loader import locate_model

    require_run_extra("evalcore prepare")
    from evalcore.errors import DataIntegrityError
    from evalcore.tasks import default_task

    task = default_task()
    directory, gguf, res = locate_model(args.model)
    print(f"model ok: {res.display_name} at {directory} ({gguf or res.revision}), sha256 verified")
    for split in ("train", "validation"):
        rows = task.load_split(split, source=args.data_source)
        print(f"data ok: {split} {len(rows)} rows, digest {task.verify_rows(split, rows)[:16]}…")
    try:
        dev, confirm = task.check_selection()
    except DataIntegrityError:
        print("selection FAILED: committed ids differ from the hash order", file=sys.stderr)
        return 1
    print(f"selection ok: {dev} dev, {confirm} confirm (sealed)")
    return 0


ITEM_SETS = ("dev", "confirm", "validation")
"""Named item sets for ``run --items``; anything else must be validation ids."""


def resolve_items(words: Sequence[str]) -> list[int]:
    """The item ids ``run --items`` names: one set name, or validation ids (checked by the run itself).

    Raises:
        InvalidInputError: a set name mixed with ids, or a word that is neither.

    Examples:
        >>> from evalcore.errors import InvalidInputError
        >>> from evalcore.workflow.cli import resolve_items
        >>> resolve_items(["3", "17"]), len(resolve_items(["dev"]))
        ([3, 17], 64)
        >>> try:
        ...     resolve_items(["dev", "3"])
        ... except InvalidInputError as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: --items takes one set name or a list of ids, got ['dev', '3']
    """
    from evalcore.tasks import default_task

    task = default_task()
    named = [w for w in words if w in ITEM_SETS]
    if named:
        if len(words) != 1:
            raise InvalidInputError(f"--items takes one set name or a list of ids, got {list(words)}")
        sets: dict[str, Callable[[], list[int]]] = {
            "dev": task.dev_ids, "confirm": task.confirm_ids,
            "validation": lambda: list(range(task.split_size("validation"))),
        }  # fmt: skip
        return sets[named[0]]()
    # ASCII digits only: str.isdigit() also accepts '²' (which int() refuses) and int() reads '١٢' as 12.
    bad = [w for w in words if not (w.isascii() and w.isdigit())]
    if bad:
        raise InvalidInputError(
            f"--items: {bad} are neither {'/'.join(ITEM_SETS)} nor validation ids (ASCII digits 0-9)"
        )
    return [int(w) for w in words]


def _run(args: argparse.Namespace) -> int:
    from evalcore.progress import Progress
    from evalcore.records.typed import RunRecord
    from evalcore.workflow.run import execute_run

    words = args.items or ["dev"]
    ids = resolve_items(words)
    default = {"dev": "runs/dev64", "confirm": "runs/confirm", "validation": "runs/validation"}.get(
        words[0] if len(words) == 1 else "", "runs/items"
    )
    out = args.out or ("runs/smoke" if args.smoke else default)
    if Path(out).exists() and not Path(out).is_dir():
        raise InvalidInputError(f"--out {out} is a file; a run writes a directory (DIR/run.json): choose a directory")
    progress = Progress()
    try:
        path, record = execute_run(
            out,
            ids=ids,
            progress=progress,
            smoke=args.smoke,
            sort_ids=not args.unsorted_ids,
            unseal=args.unseal,
            model_name=args.model,
            data_source=args.data_source,
            overwrite=args.overwrite,
        )
    finally:
        progress.close()  # a bar left open by a run that stopped early
    run = RunRecord.from_json(record, where=str(path))
    agg, led = run.aggregate, run.ledger["summary"]
    print(f"official acc {agg['official']['acc']} on {agg['official']['n']} items")
    print(f"independent acc {agg['independent']['acc']} on {agg['independent']['n']} items")
    print(f"ledger: {led['counts']}; fingerprint {run.fingerprint[:16]}…")
    print(f"wall {run.timings['total_s']:.1f} s, peak RSS {run.peak_rss_mb:.0f} MB, "
          f"{len(run.warnings)} warnings, {len(run.failures)} failures")  # fmt: skip
    print(f"record written: {path}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from evalcore.workflow.compare import compare_runs, format_comparison
    from evalcore.workflow.runs import read_run

    result = compare_runs(read_run(args.a, args.scorer), read_run(args.b, args.scorer))
    print(format_comparison(result))
    return 0


def _audit(args: argparse.Namespace) -> int:
    from evalcore.audit.levels import audit_record
    from evalcore.audit.numerics import format_tolerance
    from evalcore.audit.report import LEVELS, REDERIVED
    from evalcore.models.loader import load_model, load_tokenizer
    from evalcore.records.typed import read_run_record
    from evalcore.tasks import default_task

    record = read_run_record(args.dir)
    print("read: the schema and the self-digest hold (a digest detects an accidental edit; "
          "a forger recomputes it, so what follows re-derives)")  # fmt: skip
    rows = tokenizer = model = None
    if args.level >= 2:
        rows = default_task().load_split("validation", source=record.data_source)
        name = record.model_name
        if args.level == 3:
            model, tokenizer = load_model(name)
        else:  # prompts only: the tokenizer, not the weights
            tokenizer = load_tokenizer(name)
    report = audit_record(record, level=args.level, rows=rows, tokenizer=tokenizer, model=model)
    for level, problems in report.levels.items():
        print(f"level {level} {LEVELS[level]}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
        print(f"  re-derived: {'; '.join(REDERIVED[level])}")
        for problem in problems:
            print(f"  - {problem}")
    print(f"taken on trust after level {report.level}: {'; '.join(report.trusted())}")
    if report.rerun is not None:
        changes = report.arithmetic_changes
        print("arithmetic: the record's" if not changes else "arithmetic differs from the record's:")
        for change in changes or []:
            print(f"  - {change}")
        tol = format_tolerance(report.tolerance)
        print(f"re-run max |stored - recomputed| = {report.max_abs_diff_rerun:.3g} (tolerance {tol})")
        if report.rerun.closest:
            nearest = ", ".join(f"{i} (margin {m:.3g}, moved {c:.2g})" for i, m, c in report.rerun.closest[:3])
            print(f"closest to an argmax flip: {nearest}")
    print(report.summary())
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    """The ``evalcore`` command's parser (also read by the book's command-line reference).

    Examples:
        >>> from evalcore.workflow.cli import build_parser
        >>> args = build_parser().parse_args(["run", "--smoke", "--items", "dev"])
        >>> args.command, args.smoke, args.items, args.out
        ('run', True, ['dev'], None)
    """
    import evalcore

    parser = argparse.ArgumentParser(
        prog="evalcore",
        description="Locate and verify the pinned resources, run the harness and the independent scorer "
        "into an audited record, and audit a record.",
        epilog="exit status: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items()),
    )  # fmt: skip
    parser.add_argument("--version", action="version", version=f"%(prog)s {evalcore.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show evalcore's log on standard error")
    sub = parser.add_subparsers(dest="command", required=True)
    arith = argparse.ArgumentParser(add_help=False)
    arith.add_argument(
        "--arithmetic", choices=["pinned"], default=None,
        help="pinned: ATen's plain kernels, MKL's strict portable branch and 2 threads, set before torch loads "
        "(slower; the same bits on every x86 CPU measured, so a pinned record is audited exactly by a pinned re-run). "
        "Default: whatever the environment sets. The record names the arithmetic and its mode either way",
    )  # fmt: skip
    common = argparse.ArgumentParser(add_help=False, parents=[arith])
    common.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(MODELS), help="model registry name")
    common.add_argument(
        "--data-source", default="local", choices=["local", "hub"], help="SST-2 from $EVALBOOK_SST2_DIR or the Hub"
    )

    sub.add_parser("prepare", parents=[common], help="locate and verify the model, data and selection")
    run = sub.add_parser("run", parents=[common], help="score items twice and write DIR/run.json")
    run.add_argument(
        "--items",
        nargs="+",
        metavar="SET|ID",
        help="dev (default), confirm, validation, or validation ids; confirm items need --unseal",
    )
    run.add_argument("--smoke", action="store_true", help="4 items independent, 2 official")
    run.add_argument("--out", help="output directory (default runs/<set>, runs/items for ids, runs/smoke)")
    run.add_argument("--unsorted-ids", action="store_true",
                     help="pass the ids to the harness in hash order, unsorted: reproduces the doc_id bug")  # fmt: skip
    run.add_argument("--unseal", action="store_true", help="allow sealed confirm items (recorded)")
    run.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing record once the new run is complete (until then, and if it fails, the old stays)",
    )
    audit = sub.add_parser("audit", parents=[arith], help="audit a run record")
    audit.add_argument("dir", help="run directory (or its run.json)")
    audit.add_argument("--level", type=int, choices=[1, 2, 3], default=3,
                       help="1 stored scores; 2 + prompts re-encoded; 3 + forward pass re-run (default)")  # fmt: skip
    compare = sub.add_parser("compare", help="compare two runs item by item (paired statistics)")
    for name, which in (("a", "first"), ("b", "second")):
        compare.add_argument(name, help=f"the {which} run: a run directory, its run.json, or PART3.json#CONDITION")
    compare.add_argument("--scorer", choices=["independent", "official"], default="independent",
                         help="which scores of a run record to compare (default: independent)")  # fmt: skip
    check = sub.add_parser("check-harness", help="audit an lm-eval output directory written with --log_samples")
    check.add_argument("dir", help="the harness's --output_path")
    check.add_argument("--include-path", help="folder of the task's YAML, for a task outside lm-eval's registry")
    check.add_argument("--rescore", type=int, default=0, metavar="N",
                       help="re-score N logged samples per task with evalcore's scorer (loads --model)")  # fmt: skip
    check.add_argument("--model", default=None, choices=sorted(MODELS), help="model for --rescore (registry name)")
    check.add_argument("--seed", type=int, default=0, help="seed of the --rescore draw (default 0)")
    return parser


def _check_harness(args: argparse.Namespace) -> int:
    from evalcore.workflow.checkharness import check_command

    return check_command(args.dir, include_path=args.include_path, rescore=args.rescore, model_name=args.model,
                         seed=args.seed)  # fmt: skip


def _show_log() -> None:
    """Send the ``evalcore`` logger's INFO records to standard error (once, however often it is called)."""
    logger = logging.getLogger("evalcore")
    logger.setLevel(logging.INFO)
    if not any(getattr(h, "evalcore_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler()  # standard error at the time of the call
        handler.setFormatter(logging.Formatter("evalcore: %(message)s"))
        handler.evalcore_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status.

    Examples:
        >>> import contextlib, io
        >>> from evalcore.workflow.cli import main
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     status = main(["compare", "no-such-run", "runs/other"])
        >>> status
        2
        >>> print(err.getvalue())
        error: InvalidInputError: no run at 'no-such-run': give a run directory, ...
    """
    return _main(argv)


def _main(argv: Sequence[str] | None, *, leaving: bool = False) -> int:
    """:func:`main`; ``leaving``: the process exits right after, so signals stay ignored once it stops."""
    args = build_parser().parse_args(argv)
    if args.verbose:
        _show_log()
    handler = {"prepare": _prepare, "run": _run, "audit": _audit, "compare": _compare,
               "check-harness": _check_harness}[args.command]  # fmt: skip
    with signal_watch(ignore_after_stop=leaving) as watch:
        try:
            if getattr(args, "arithmetic", None) == "pinned":
                from evalcore.audit.machine import PINNED_ARITHMETIC, pin_arithmetic

                pin_arithmetic(PINNED_ARITHMETIC)
            status = handler(args)
            watch.check()  # a signal some library swallowed still stops the command
            return status
        except BaseException as exc:
            if watch.fired or isinstance(exc, KeyboardInterrupt):  # however it surfaced
                watch.stop()  # later signals are counted, not raised into this message
                name = {143: "SIGTERM"}.get(watch.exit_status, "SIGINT, Ctrl-C")
                what = f"interrupted ({name}) during {args.command}"
                print(f"{what}; nothing was completed", file=sys.stderr)
                return watch.exit_status or 130
            if isinstance(exc, EvalcoreError):
                print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
                return 2
            if isinstance(exc, OSError):
                print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
                return 3
            raise


def entry() -> None:
    """The ``evalcore`` command and ``python -m evalcore``: :func:`main`, then exit with its status.

    After an interruption (status 130 after SIGINT, 143 after SIGTERM) the process leaves
    at once, without interpreter finalization, and ignores further signals from the
    moment it began to stop: the run has already recorded its claim as ``interrupted``,
    and a user still pressing Ctrl-C gets neither a traceback nor another status. (Once,
    a command that had caught the interrupt and printed its message still died by SIGINT,
    status -2, at exit: CPython re-raises SIGINT at exit when a KeyboardInterrupt passed
    through code an extension ran with ``PyRun_*``, even though it was caught later.)

    Examples:
        >>> import contextlib, io, sys
        >>> from unittest import mock
        >>> from evalcore.workflow.cli import entry
        >>> argv = ["evalcore", "compare", "no-such-run", "runs/other"]
        >>> quiet = contextlib.redirect_stderr(io.StringIO())
        >>> with mock.patch.object(sys, "argv", argv), quiet:
        ...     try:
        ...         entry()
        ...     except SystemExit as stop:
        ...         print(f"exit status {stop.code}")
        exit status 2
    """
    status = _main(None, leaving=True)
    if status in EXIT_BY_SIGNAL.values():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
