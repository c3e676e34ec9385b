"""The repository configuration (scripts/book_config.py), checked through Jupyter Book's own translation:
a repository link in the header, and never Binder or Colab launch buttons."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from script_modules import load

ROOT = Path(__file__).resolve().parents[1]
_script = load("scripts/book_config.py")
ConfigError, repository_config = _script.ConfigError, _script.repository_config

BASE = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def test_committed_config_has_no_launch_buttons_and_no_invented_repository():
    assert "repository" not in BASE and "launch_buttons" not in BASE


def test_a_github_repository_is_linked_without_launch_buttons():
    config = repository_config(BASE, "https://github.com/some-org/eval-book.git", "main")
    assert config["repository"] == {
        "url": "https://github.com/some-org/eval-book",
        "branch": "main",
        "path_to_book": "",
    }
    assert "launch_buttons" not in config and config["html"]["use_repository_button"] is True
    paths = [Path(path) for path in config["sphinx"]["local_extensions"].values()]
    assert all(path.is_absolute() and path.is_dir() for path in paths)
    assert set(BASE["sphinx"]["local_extensions"].values()) == {"book/_ext"}  # the base is not mutated


def test_a_gitlab_repository_is_linked_too():
    config = repository_config(BASE, "https://gitlab.com/some-org/eval-book", "pages")
    assert config["repository"]["url"] == "https://gitlab.com/some-org/eval-book" and "launch_buttons" not in config


@pytest.mark.parametrize(
    ("url", "branch"),
    [
        ("http://github.com/o/r", "main"),
        ("https://github.com/o", "main"),
        ("https://example.com/o/r", "main"),
        ("https://github.com/o/r/tree/main", "main"),
        ("", "main"),
        ("https://github.com/o/r", ""),
        ("https://github.com/o/r", "two words"),
    ],
)
def test_unusable_address_or_branch_refused(url, branch):
    with pytest.raises(ConfigError):
        repository_config(BASE, url, branch)


def test_cli_refusal_names_the_value_and_writes_nothing(tmp_path):
    out = tmp_path / "_config.yml"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/book_config.py"), "https://example.com/x/y", "--out", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "'https://example.com/x/y' is not https://github.com/OWNER/REPO" in done.stderr
    assert not out.exists()


def test_jupyter_book_turns_it_into_a_repository_button_and_no_launch_buttons(tmp_path):
    out = tmp_path / "_config.yml"
    script = ROOT / "scripts/book_config.py"
    subprocess.run(
        [sys.executable, str(script), "https://github.com/some-org/eval-book", "--out", str(out)], check=True
    )
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "config", "sphinx", str(ROOT), "--config", str(out)], check=True, capture_output=True)
    conf = (tmp_path / "conf.py").read_text(encoding="utf-8")
    options = next(line for line in conf.splitlines() if line.startswith("html_theme_options = "))
    theme = ast.literal_eval(options.split(" = ", 1)[1])
    assert theme["repository_url"] == "https://github.com/some-org/eval-book"
    buttons = theme.get("launch_buttons", {})
    assert not buttons.get("binderhub_url") and not buttons.get("colab_url") and not buttons.get("jupyterhub_url")
    assert theme["use_repository_button"] is True
