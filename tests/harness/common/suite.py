"""What the conformance suites (claude-code/run.py, agents/run.py) share:
the failing check, the scratch world each scenario runs in (a HOME and a
repository with one commit), a session against a scripted mock model
(mockapi.py) on loopback, and the loop that runs the scenarios.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# The person who commits in every scratch repository; no system config.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.invalid",
    "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.invalid",
}


class Failed(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Failed(what)


class World:
    """A scratch directory with a HOME (and, with `tmpdir`, a TMPDIR apart
    from it) and a repository on branch main whose one commit is a Makefile
    with a failing test. `env` is added to the environment, the variables
    in `drop` are taken out of it."""

    def __init__(self, prefix, env, drop, tmpdir=False):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.home = os.path.join(self.dir, "home")
        self.repo = os.path.join(self.dir, "repo")
        os.makedirs(self.home)
        self.env = dict(os.environ, HOME=self.home, **GIT_ENV, **env)
        if tmpdir:
            self.tmp = os.path.join(self.dir, "tmp")
            os.makedirs(self.tmp)
            self.env["TMPDIR"] = self.tmp
        for var in drop:
            self.env.pop(var, None)
        self.notes = []
        self.git("init", "-q", "-b", "main", self.repo, cwd=self.dir)
        with open(os.path.join(self.repo, "Makefile"), "w") as f:
            f.write("test:\n\t@echo 'FAIL: expiry accepts an expired token'; exit 1\n")
        self.git("add", "Makefile")
        self.git("commit", "-q", "-m", "init")

    def git(self, *args, cwd=None):
        out = subprocess.run(["git", *args], cwd=cwd or self.repo, env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            raise Failed(f"git {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def remove(self):
        # A server the CLI started may still be writing as it exits.
        for _ in range(10):
            shutil.rmtree(self.dir, ignore_errors=True)
            if not os.path.exists(self.dir):
                return
            time.sleep(0.2)

    def with_mock(self, mock, name, turns, run):
        """`run(port)` while the mock model `mock` (a mock.py) serves these
        scripted turns on loopback; the requests it logged, and what `run`
        returned."""
        base = os.path.join(self.dir, name)
        with open(base + ".script.json", "w") as f:
            json.dump(turns, f)
        for suffix in (".log.jsonl", ".port"):
            if os.path.exists(base + suffix):
                os.remove(base + suffix)
        server = subprocess.Popen([sys.executable, mock, base + ".script.json", base + ".log.jsonl", base + ".port"])
        try:
            for _ in range(250):
                if os.path.exists(base + ".port") and open(base + ".port").read():
                    break
                time.sleep(0.02)
            out = run(open(base + ".port").read())
        finally:
            server.kill()
            server.wait()
        requests = []
        if os.path.exists(base + ".log.jsonl"):
            requests = [json.loads(line) for line in open(base + ".log.jsonl")]
        return requests, out


def run_scenarios(scenarios, world):
    """Each scenario in a fresh `world()`, removed after it (kept with
    GIT_HANDOFF_KEEP=1); prints a line for each; (passed, failed)."""
    passed, failed = 0, 0
    for scenario in scenarios:
        w = world()
        started = time.monotonic()
        try:
            scenario(w)
            passed += 1
            print(f"ok: {scenario.__name__} ({time.monotonic() - started:.1f}s)")
            for note in w.notes:
                print(f"  note: {note}")
        except (Failed, subprocess.TimeoutExpired) as e:
            failed += 1
            print(f"FAILED: {scenario.__name__}: {e}")
        finally:
            if not os.environ.get("GIT_HANDOFF_KEEP"):
                w.remove()
            else:
                print(f"  kept {w.dir}")
    return passed, failed
