"""Write a copy of _config.yml with the public repository that hosts the book, linked from every page.

Only the instructor who publishes the site knows that address, so the committed
_config.yml names none. `make book BOOK_REPOSITORY_URL=https://github.com/OWNER/REPO`
calls this script and builds with the result. The site gets no Binder or Colab launch
buttons, with or without it: a notebook opened there has neither this package nor its
pinned environment, and never the SST-2 sentences (which the repository does not hold),
so its first cell would fail. Each notebook page is offered as .ipynb and .md downloads.

    python scripts/book_config.py https://github.com/OWNER/REPO --branch main --out _build/publish/_config.yml
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from evalcore.records.atomic import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"https://(github\.com|gitlab\.com)/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(\.git)?/?")


class ConfigError(ValueError):
    """The repository address or branch cannot be used."""


def repository_config(base: dict, repository_url: str, branch: str) -> dict:
    """``base`` with ``repository`` set for ``repository_url`` and the header's repository button on.

    Raises:
        ConfigError: not an https GitHub or GitLab repository address, or an empty branch.
    """
    match = URL.fullmatch(repository_url or "")
    if match is None:
        raise ConfigError(
            f"repository URL {repository_url!r} is not https://github.com/OWNER/REPO or https://gitlab.com/OWNER/REPO"
        )
    if not branch or branch != branch.strip() or " " in branch:
        raise ConfigError(f"branch {branch!r} is not a branch name")
    host, owner, repo = match.group(1), match.group(2), match.group(3)
    config = dict(base)
    config["repository"] = {"url": f"https://{host}/{owner}/{repo}", "branch": branch, "path_to_book": ""}
    config["html"] = {**base.get("html", {}), "use_repository_button": True}
    # Jupyter Book resolves local extension paths against the config file's directory, and the
    # generated file lives elsewhere: make them absolute.
    sphinx = dict(base.get("sphinx", {}))
    sphinx["local_extensions"] = {
        name: str((ROOT / path).resolve()) for name, path in sphinx.get("local_extensions", {}).items()
    }
    config["sphinx"] = sphinx
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repository_url")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    base = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    try:
        config = repository_config(base, args.repository_url, args.branch)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    print(f"repository link {config['repository']['url']} ({args.branch}) -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
