from __future__ import annotations

import shutil
from importlib.metadata import PathDistribution, distribution
from pathlib import Path

import pytest

from evalcore.errors import HarnessMismatchError
from evalcore.harness.install import verify_harness_files
from evalcore.harness.official import HARNESS_VERSION, require_pinned_harness, run_official

# Files of the real install copied into a fake site-packages; their RECORD lines are the wheel's own.
COPIED = ("lm_eval/__init__.py", "lm_eval/evaluator.py", "lm_eval/tasks/glue/sst2/default.yaml")
DIST_INFO = f"lm_eval-{HARNESS_VERSION}.dist-info"


def _fake_site(tmp_path: Path, *, version: str = HARNESS_VERSION, extra_record: str = "") -> Path:
    """A site-packages in ``tmp_path`` with three lm-eval files and the wheel's RECORD lines for them."""
    real = distribution("lm_eval")
    root = Path(real.locate_file(""))
    site = tmp_path / "site"
    for rel in COPIED:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, site / rel)
    lines = [line for line in (real.read_text("RECORD") or "").splitlines() if line.split(",")[0] in COPIED]
    assert len(lines) == len(COPIED)
    lines += ["lm_eval/__pycache__/__init__.cpython-311.pyc,,", f"{DIST_INFO}/RECORD,,"]
    info = site / DIST_INFO
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: lm_eval\nVersion: {version}\n", encoding="utf-8")
    (info / "RECORD").write_text("\n".join(lines) + "\n" + extra_record, encoding="utf-8")
    return site


def _dist(site: Path) -> PathDistribution:
    return PathDistribution(site / DIST_INFO)


def test_installed_harness_matches_its_record():
    report = verify_harness_files()
    assert report.name == "lm_eval" and report.version == HARNESS_VERSION
    assert report.checked > 1000  # the wheel installs ~14,000 files under lm_eval/
    assert report.modified == () and report.missing == () and report.unverifiable == ()
    assert report.unmodified
    assert require_pinned_harness() == report


def test_installed_check_runs_once_per_process():
    assert verify_harness_files() is verify_harness_files()


def test_untouched_copy_verifies_clean(tmp_path):
    report = verify_harness_files(_dist(_fake_site(tmp_path)))
    assert report.checked == len(COPIED)
    assert (report.modified, report.missing, report.unverifiable, report.unlisted) == ((), (), (), ())
    require_pinned_harness(_dist(_fake_site(tmp_path / "again")))


def test_one_changed_byte_is_detected(tmp_path):
    # Guards against trusting the version string: an edited 0.4.9.2 must not pass.
    site = _fake_site(tmp_path)
    path = site / "lm_eval/evaluator.py"
    data = bytearray(path.read_bytes())
    data[100] ^= 0x01  # same size, different hash
    path.write_bytes(bytes(data))
    report = verify_harness_files(_dist(site))
    assert report.modified == ("lm_eval/evaluator.py",) and report.missing == ()
    assert not report.unmodified
    with pytest.raises(HarnessMismatchError, match=r"0\.4\.9\.2.*lm_eval/evaluator\.py"):
        require_pinned_harness(_dist(site))


def test_a_missing_file_and_an_appended_byte_are_named(tmp_path):
    site = _fake_site(tmp_path)
    (site / "lm_eval/tasks/glue/sst2/default.yaml").unlink()
    with (site / "lm_eval/__init__.py").open("ab") as fh:
        fh.write(b"\n")
    report = verify_harness_files(_dist(site))
    assert report.missing == ("lm_eval/tasks/glue/sst2/default.yaml",)
    assert report.modified == ("lm_eval/__init__.py",)
    assert report.checked == 2
    with pytest.raises(HarnessMismatchError) as info:
        require_pinned_harness(_dist(site))
    assert "lm_eval/tasks/glue/sst2/default.yaml" in str(info.value) and "lm_eval/__init__.py" in str(info.value)


def test_unlisted_files_are_reported_and_byte_code_ignored(tmp_path):
    site = _fake_site(tmp_path)
    (site / "lm_eval/tasks/extra_task.py").write_text("X = 1\n", encoding="utf-8")
    (site / "lm_eval/__pycache__").mkdir()
    (site / "lm_eval/__pycache__/evaluator.cpython-311.pyc").write_bytes(b"\0")
    (site / "lm_eval/stray.pyc").write_bytes(b"\0")
    report = verify_harness_files(_dist(site))
    assert report.unlisted == ("lm_eval/tasks/extra_task.py",)
    assert report.modified == () and report.missing == ()
    require_pinned_harness(_dist(site))  # an added file changes no cited line: reported, not refused


def test_another_version_is_refused_even_when_its_files_match(tmp_path):
    site = _fake_site(tmp_path, version="0.4.9.3")
    assert verify_harness_files(_dist(site)).unmodified
    with pytest.raises(HarnessMismatchError, match=r"lm-eval 0\.4\.9\.3 .*pins 0\.4\.9\.2"):
        require_pinned_harness(_dist(site))


def test_a_listed_file_without_hash_cannot_pass(tmp_path):
    site = _fake_site(tmp_path, extra_record="lm_eval/unhashed.py,,\n")
    (site / "lm_eval/unhashed.py").write_text("X = 1\n", encoding="utf-8")
    report = verify_harness_files(_dist(site))
    assert report.unverifiable == ("lm_eval/unhashed.py",) and report.unlisted == ()
    with pytest.raises(HarnessMismatchError, match=r"unhashed\.py"):
        require_pinned_harness(_dist(site))


def test_a_distribution_without_record_checks_nothing_and_is_refused(tmp_path):
    site = _fake_site(tmp_path)
    (site / DIST_INFO / "RECORD").unlink()
    report = verify_harness_files(_dist(site))
    assert report.checked == 0 and not report.unmodified
    with pytest.raises(HarnessMismatchError, match="no file"):
        require_pinned_harness(_dist(site))


def test_run_official_refuses_a_modified_harness_first(tmp_path, monkeypatch):
    # run_official must check the files, not only the version, before it does anything else.
    import evalcore.harness.official as harness

    site = _fake_site(tmp_path)
    (site / "lm_eval/evaluator.py").write_bytes(b"edited")
    monkeypatch.setattr(harness, "verify_harness_files", lambda dist=None: verify_harness_files(_dist(site)))
    with pytest.raises(HarnessMismatchError, match=r"lm_eval/evaluator\.py"):
        run_official([], [], [0])
