"""scripts/ensure_browser.sh: make test's first step, which must stop at once when it cannot help."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "ensure_browser.sh"


def _run(
    tmp_path: Path,
    uid: str,
    browser: bool,
    font: bool = True,
    node: bool = True,
    *,
    release: str = "ID=debian\n",
    args: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "id").chmod(0o755)
    os.symlink("/usr/bin/grep" if Path("/usr/bin/grep").exists() else "/bin/grep", bin_dir / "grep")
    if browser:
        (bin_dir / "chromium-browser").write_text("#!/bin/sh\n")
        (bin_dir / "chromium-browser").chmod(0o755)
    if node:
        (bin_dir / "node").write_text("#!/bin/sh\n")
        (bin_dir / "node").chmod(0o755)
    # fontconfig's answer for :lang=zh: a family name when a CJK font is installed, nothing otherwise
    (bin_dir / "fc-list").write_text("#!/bin/sh\n" + ("echo 'WenQuanYi Zen Hei'\n" if font else ""))
    (bin_dir / "fc-list").chmod(0o755)
    (tmp_path / "os-release").write_text(release)
    env = {"PATH": str(bin_dir), "OS_RELEASE": str(tmp_path / "os-release")}
    return subprocess.run(["/bin/bash", str(SCRIPT), *args], env=env, capture_output=True,
                          text=True, check=False, timeout=30)  # fmt: skip


def test_without_browser_or_root_it_stops_at_once_with_the_command(tmp_path):
    done = _run(tmp_path, "1000", browser=False)
    assert done.returncode == 1
    assert (
        "sudo apt-get update && sudo apt-get install -y chromium fonts-dejavu-core fonts-wqy-zenhei nodejs"
        in done.stderr
    )


def test_an_installed_browser_under_either_name_is_enough(tmp_path):
    done = _run(tmp_path, "1000", browser=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_browser_without_a_cjk_font_is_not_enough(tmp_path):
    # The Chinese edition's pages and figures need Chinese glyphs: Chromium alone once passed this step.
    done = _run(tmp_path, "1000", browser=True, font=False)
    assert done.returncode == 1
    assert "a font with Chinese glyphs" in done.stderr and "fonts-wqy-zenhei" in done.stderr


def test_a_browser_and_a_font_without_node_is_not_enough(tmp_path):
    # make test requires the Node.js cross-check of the canonical JSON; it is no longer skipped.
    done = _run(tmp_path, "1000", browser=True, node=False)
    assert done.returncode == 1
    assert "Node.js" in done.stderr and "nodejs" in done.stderr


def test_each_distribution_is_told_its_own_packages(tmp_path):
    cases = {
        'ID=fedora\nID_LIKE=""\n': "sudo dnf install -y google-noto-sans-cjk-fonts dejavu-sans-fonts chromium nodejs",
        "ID=arch\n": "sudo pacman -S noto-fonts-cjk ttf-dejavu chromium nodejs",
        'ID=opensuse-tumbleweed\nID_LIKE="opensuse suse"\n': "sudo zypper install noto-sans-sc-fonts",
        "ID=alpine\n": "apk add font-noto-cjk font-dejavu fontconfig chromium nodejs",
        'ID=linuxmint\nID_LIKE="ubuntu debian"\n': "sudo apt-get update && sudo apt-get install -y chromium",
        "ID=plan9\n": "Install a CJK font that fontconfig lists for :lang=zh (fc-list :lang=zh), Chromium",
    }
    for n, (release, command) in enumerate(cases.items()):
        where = tmp_path / str(n)
        where.mkdir()
        done = _run(where, "0", browser=False, release=release)  # root, but not on Debian: nothing is installed
        assert done.returncode == 1 and command in done.stderr, (release, done.stderr)


def test_make_book_asks_for_the_font_alone(tmp_path):
    fine = _run(tmp_path, "1000", browser=False, node=False, args=("--font",))
    assert (fine.returncode, fine.stderr) == (0, "")
    (tmp_path / "again").mkdir()
    missing = _run(tmp_path / "again", "1000", browser=False, font=False, node=False, release="ID=fedora\n",
                   args=("--font",))  # fmt: skip
    assert missing.returncode == 1
    assert "make book needs a font with Chinese glyphs" in missing.stderr
    assert "sudo dnf install -y google-noto-sans-cjk-fonts dejavu-sans-fonts   (then make again)" in missing.stderr
    assert "chromium" not in missing.stderr.lower()
