"""`firelane demo` in a terminal: its progress in one rewritten line (not the
fight's hundreds of events at once), and a replay link to a table that is
served until Ctrl-C, so the link printed is live."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.cli_helpers import ENGINE_ENV, FIRELANE, REPO


def _read_until(fd: int, pattern: str, timeout: float) -> str:
    seen = b""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if re.search(pattern, seen.decode(errors="replace")):
                return seen.decode(errors="replace")
    raise AssertionError(f"no {pattern!r} in {seen.decode(errors='replace')[-2000:]}")


def test_a_demo_in_a_terminal_shows_progress_in_one_line_and_serves_its_replay_link(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen([*FIRELANE, "demo", "--seed", "2", "--data-dir", str(tmp_path / "data")], cwd=REPO,
                               env={**ENGINE_ENV, "NO_COLOR": "1"}, stdin=follower, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        out = _read_until(leader, r"serving the table until you press Ctrl-C", timeout=120)
        lines = [line for line in out.replace("\r\n", "\n").split("\n") if line.strip()]
        assert len(lines) <= 8, lines  # progress, summary, audit, replay, link, serving: not every event
        progress = [part for part in out.split("\r") if part.strip().lstrip("\x1b[K").startswith("round ")]
        assert len(progress) >= 3 and "events · standing:" in progress[-1], progress
        assert "winner:" in out and "all verified" in out
        link = re.search(r"replay it in a browser: (http://127\.0\.0\.1:\d+)/table/default/(\S+)#token=(\S+)&replay", out)
        assert link, out
        api, encounter, token = link.groups()
        with httpx.Client(timeout=10) as http:  # the link is live: the page and the fight's view answer
            assert '<script type="module" src="/table/assets/app.js">' in http.get(f"{api}/table/default/{encounter}").text
            view = http.get(f"{api}/api/campaigns/default/encounters/{encounter}/view?tail=1",
                            headers={"Authorization": f"Bearer {token}"}).json()
            assert view["seat"]["role"] == "spectator" and view["state"]["ended"]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
        assert process.stderr is not None
        assert "stopped serving the table" in process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
