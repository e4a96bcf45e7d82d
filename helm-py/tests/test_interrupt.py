"""Ctrl-C interrupts a blocking wait: SIGINT during ``ask`` raises
KeyboardInterrupt within a moment, and the thread's running turn is stopped
(not left working in the background)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = r'''
import signal, sys, threading, onehelm
# A job started in the background (CI, `cmd &`) inherits SIGINT ignored, and
# Python then never raises KeyboardInterrupt: restore what a terminal gives.
signal.signal(signal.SIGINT, signal.default_int_handler)
started = threading.Event()

class Stuck:
    def stream(self, request):
        started.set()
        threading.Event().wait(30)   # a model that never answers
        yield "too late"

with onehelm.Helm.open(sys.argv[1]) as helm:
    helm.providers.register("stuck", Stuck())
    ch = helm.create_channel("slow", "Waits forever.")
    ch.set_model("stuck")
    def announce():
        started.wait(20)
        print("waiting", flush=True)
    threading.Thread(target=announce, daemon=True).start()
    try:
        ch.ask("hello?")
    except KeyboardInterrupt:
        try:
            thread = ch.threads()[0]
            reply = [m for m in thread.messages() if m.author_kind == "agent"][-1]
            print("interrupted", thread.status, reply.status, flush=True)
        except Exception as e:   # said on the line the test reads
            print("failed", repr(e), flush=True)
            raise
'''


def test_ctrl_c_interrupts_a_blocking_ask_and_stops_the_turn(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "waiting"
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    line = child.stdout.readline().split()
    took = time.monotonic() - sent
    child.wait(timeout=60)
    assert line[:1] == ["interrupted"], line
    # The reply was stopped, not left streaming.
    assert line[2] == "stopped", line
    assert took < 10, took
