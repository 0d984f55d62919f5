"""The emulation's lab: namespaces and links exist while it is open and are gone after
every way out (normal, error, SIGINT, SIGTERM); leftovers refuse a new run; the kernel
probe. Skipped, with the reason, where namespaces cannot be made."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from helpers import default_sigint, namespaces_why_not
from tenantnet import ScenarioError
from tenantnet.linux.lab import Lab, cleanup, leftovers, namespaces, probe, require

ROOT = Path(__file__).resolve().parents[1]


WHY_NOT = namespaces_why_not()
# Real namespaces, links and wall-clock rates: `make test` runs these alone, after
# the rest has run on every core (the `serial` marker).
pytestmark = [pytest.mark.serial,
              pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))]


def tag() -> str:
    return f"t{uuid.uuid4().hex[:6]}"


def test_the_lab_owns_its_namespaces_and_links_until_it_closes() -> None:
    t = tag()
    with Lab(t) as lab:
        a, b = lab.ns("h0"), lab.ns("sw")
        lab.link(a, "eth0", b, "p0")
        assert {a, b} <= set(namespaces())
        r = subprocess.run(["ip", "-n", a, "-o", "link", "show", "eth0"], capture_output=True,
                           text=True)
        assert r.returncode == 0 and "state" in r.stdout
    assert leftovers(f"tn-{t}-") == []


def test_an_error_inside_the_lab_still_removes_everything() -> None:
    t = tag()
    with pytest.raises(RuntimeError), Lab(t) as lab:
        lab.ns("h0")
        raise RuntimeError("boom")
    assert leftovers(f"tn-{t}-") == []


def test_leftovers_of_a_run_refuse_a_new_one_until_cleaned_up() -> None:
    t = tag()
    subprocess.run(["ip", "netns", "add", f"tn-{t}-h0"], check=True)
    try:
        with pytest.raises(ScenarioError, match=f"tn-{t}-h0"), Lab(t):
            pass
    finally:
        assert cleanup(f"tn-{t}-") == [f"tn-{t}-h0"]
    assert leftovers(f"tn-{t}-") == []


def test_a_forked_child_killed_by_sigterm_leaves_the_labs_namespaces_alone() -> None:
    # pyroute2's netlink helpers and an emulation's generator are forked children: they
    # inherit the SIGTERM handler and the stack, and once unwound the lab's `with`
    # block in the child and removed the parent's namespaces mid-run
    import os
    t = tag()
    with Lab(t) as lab:
        lab.ns("h0")
        pid = os.fork()
        if pid == 0:  # the child: wait to be terminated
            time.sleep(30)
            os._exit(0)
        time.sleep(0.2)
        os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGTERM
        assert leftovers(f"tn-{t}-") == [f"tn-{t}-h0"]
    assert leftovers(f"tn-{t}-") == []


CHILD = """
import sys, time
from tenantnet.linux.lab import Lab
with Lab(sys.argv[1]) as lab:
    a, b = lab.ns("h0"), lab.ns("sw")
    lab.link(a, "eth0", b, "p0")
    print("ready", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_run_leaves_nothing_behind(sig: signal.Signals) -> None:
    t = tag()
    p = subprocess.Popen([sys.executable, "-c", CHILD, t], stdout=subprocess.PIPE, text=True,
                         preexec_fn=default_sigint)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        assert len(leftovers(f"tn-{t}-")) == 2
        p.send_signal(sig)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
        cleanup(f"tn-{t}-")
    assert p.returncode != 0
    deadline = time.monotonic() + 5
    while leftovers(f"tn-{t}-") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert leftovers(f"tn-{t}-") == []


def test_the_probe_finds_what_an_emulation_needs_and_names_what_is_missing() -> None:
    have = probe()
    assert set(have) >= {"htb", "tbf", "pfifo", "clsact", "netem", "red", "tcp_reno",
                         "tcp_cubic", "tcp_dctcp"}
    assert have["htb"] and have["pfifo"] and have["tcp_reno"]
    assert leftovers("tn-probe") == []
    with pytest.raises(ScenarioError, match=r"lacks what the scenario needs: netem \(link "
                                            r"delay\)"):
        require({"htb": "link rates", "netem": "link delay"},
                {**have, "htb": True, "netem": False})
