"""Whether a writer process is still alive, by pid and start time (evalcore.processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from evalcore.processes import CLOCK_SLACK_S, process_alive, writer_alive


def test_this_process_is_alive_with_its_start_time():
    alive, started = process_alive(os.getpid())
    assert alive and abs(started - psutil.Process().create_time()) < CLOCK_SLACK_S
    assert writer_alive(os.getpid(), started=started, written_at=time.time())


def test_a_reaped_process_is_gone():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert process_alive(child.pid) == (False, None) and not writer_alive(child.pid)


def test_a_reused_pid_is_told_apart_by_start_time_or_by_the_files_time():
    # Regression guard: a lock naming pid 1 (alive, another process) blocked a directory for ever.
    started = psutil.Process(1).create_time()
    assert writer_alive(1)  # a pid alone proves nothing
    assert not writer_alive(1, started=started + 100)  # pid 1 started at another time: not the writer
    assert not writer_alive(1, written_at=started - 100)  # written before pid 1 started: not the writer
    assert not writer_alive(0) and not writer_alive(-5)
