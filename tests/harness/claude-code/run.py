#!/usr/bin/env python3
"""Conformance of git-handoff's Claude Code plugin against the real Claude
Code CLI, offline: a scripted mock of the Messages API on loopback
(mock.py) answers every model call, and each scenario checks what the
model received (the request bodies) and what git-handoff stored.

Usage: tests/harness/claude-code/run.py [CLAUDE]   (default: `claude` on
PATH, else tests/harness/claude-code/node_modules/.bin/claude after
`npm install --prefix tests/harness/claude-code @anthropic-ai/claude-code@2.1.328`)
Needs git-handoff on PATH (a build of this checkout) and python3.
Exits 1 with the failing check named; prints "N passed, 0 failed".
"""
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))
from suite import Failed, check, run_scenarios  # noqa: E402
import suite  # noqa: E402

PLUGIN = os.path.join(ROOT, "contrib", "claude")
TOOL = "mcp__plugin_git-handoff_git-handoff__"
ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "ANTHROPIC_API_KEY": "sk-ant-mock",
    "DISABLE_AUTOUPDATER": "1",
}


class World(suite.World):
    def __init__(self, claude):
        self.claude = claude
        super().__init__("git-handoff-cc-", ENV,
                         ["GIT_DIR", "GIT_WORK_TREE", "GIT_HANDOFF_SESSION", "CLAUDE_CONFIG_DIR", "CLAUDE_ENV_FILE"])

    def handoff(self, *args):
        return self.git("handoff", *args)

    def brief(self, key="main"):
        out = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/handoffs/{key}"],
                             cwd=self.repo, env=self.env, capture_output=True, text=True)
        return out.stdout.strip() or None

    def session(self, name, turns, tools, plugin_dir=True, prompt=None, args=()):
        """Run `claude -p` against the mock with these scripted turns (the
        prompt, else `scenario NAME`; `args` such as --resume ID); the
        request bodies the model got, the stream-json lines, stderr."""
        def run(port):
            env = dict(self.env, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}")
            return subprocess.run(
                [self.claude, "-p", prompt or f"scenario {name}", "--output-format", "stream-json", "--verbose",
                 *args, *(["--plugin-dir", PLUGIN] if plugin_dir else []), "--allowedTools", *tools],
                cwd=self.repo, env=env, capture_output=True, text=True, timeout=120)
        requests, out = self.with_mock(os.path.join(HERE, "mock.py"), name, turns, run)
        lines = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
        check(out.returncode == 0, f"{name}: claude exited {out.returncode}: {out.stderr[-500:]}")
        return [r for r in requests if r.get("tools")], lines, out.stderr


def write_brief(w):
    w.handoff("write", "--done-when", "make test passes", "--resume-by", "fix verify()",
              "--next-check", "make test", "--decision", "use <= not <",
              "--rejected", "a global clock mock", "--no-lint")
    return w.brief()


def startup_context_tools_and_results(w):
    """The SessionStart context, the tool list and schemas, and a tool's
    result: what the model sees of each."""
    write_brief(w)
    names = ["resume", "write", "list", "show"]
    reqs, lines, stderr = w.session("startup", [
        {"tool": "ToolSearch", "input": {"query": "select:" + ",".join(TOOL + n for n in names)}},
        {"tool": TOOL + "resume", "input": {}},
        {"text": "resumed"},
    ], ["ToolSearch", TOOL + "resume"])
    check(len(reqs) >= 3, f"startup: {len(reqs)} model calls")
    first = json.dumps(reqs[0])
    check("A handoff brief exists for this branch" in first, "startup: the SessionStart context is not in the model's input")
    for name in names:
        check(TOOL + name in first, f"startup: tool {name} not offered to the model")
    # Loaded through ToolSearch, the tools' schemas reach the model.
    tools = {t["name"]: t for t in reqs[1]["tools"]}
    for name in names:
        check(TOOL + name in tools, f"startup: tool {name}'s schema never reached the model")
        check("description" in json.dumps(tools[TOOL + name].get("input_schema", {})) or name == "list",
              f"startup: tool {name}'s input schema carries no descriptions")
    check('"format": "uint' not in json.dumps(tools) and '"format":"uint' not in json.dumps(tools),
          "startup: a non-standard schema format reached the model")
    check(not stderr.strip(), f"startup: Claude Code warned: {stderr[:300]}")
    third = json.dumps(reqs[2])
    check("# Resume" in third, "startup: the resume tool's render did not reach the model")


def tool_definitions_fit_in_12_kb(w):
    """Issue 58: every tool the plugin's server offers, loaded through
    ToolSearch, reaches the model as name, description and input schema in
    at most 12 KB (measured as the request carries them)."""
    names = ["resume", "reground", "brief", "list", "show", "log", "write", "recover", "lint",
             "validate", "usage"]
    reqs, _, _ = w.session("tool-sizes", [
        {"tool": "ToolSearch", "input": {"query": "select:" + ",".join(TOOL + n for n in names)}},
        {"text": "loaded"},
    ], ["ToolSearch"])
    check(len(reqs) >= 2, f"tool-sizes: {len(reqs)} model calls")
    tools = [t for t in reqs[1]["tools"] if t["name"].startswith(TOOL)]
    check(sorted(t["name"][len(TOOL):] for t in tools) == sorted(names),
          f"tool-sizes: the model got {[t['name'] for t in tools]}")
    size = len(json.dumps([{k: t.get(k) for k in ("name", "description", "input_schema")} for t in tools],
                          separators=(",", ":"), ensure_ascii=False).encode())
    print(f"  tool definitions as the model receives them: {size} bytes ({len(tools)} tools)")
    check(size <= 12_000, f"tool-sizes: {size} bytes of tool definitions")


def handoff_command_writes_then_clear_continues(w):
    """`/handoff` with no argument WRITEs (the key by the ladder), shows
    what was stored and says `/clear` continues from it; after `/clear`
    the brief is in the new context."""
    reqs, lines, _ = w.session("handoff-write", [
        {"tool": "Bash", "input": {"command": "git handoff write --done-when 'make test passes' --resume-by 'fix verify()' --next-check 'make test' --decision 'use <= not < — the expiry second is valid' --rejected 'a global clock mock — tests share state' --no-lint", "description": "hand off"}},
        {"tool": "Bash", "input": {"command": "git handoff resume main", "description": "show it"}},
        {"text": "Stored as 'main'. `/clear` now continues from it."},
    ], ["Bash(git handoff:*)"], prompt="/git-handoff:handoff")
    first = json.dumps(reqs[0], ensure_ascii=False)
    check("The argument is: ``" in first and "| (none) | WRITE |" in first,
          "handoff-write: the /handoff command's text did not reach the model")
    check("`/clear` now continues from it" in first, "handoff-write: the command does not say /clear continues")
    check(w.brief() is not None, "handoff-write: no brief stored")
    brief = json.loads(w.git("cat-file", "-p", "refs/handoffs/main"))
    check(brief["mode"] == "WRITE", f"handoff-write: mode {brief['mode']}")
    check(len(reqs) >= 3 and "# Resume — main" in json.dumps(reqs[2], ensure_ascii=False),
          "handoff-write: what was stored was not shown")
    sid = next(l["session_id"] for l in lines if l.get("type") == "system" and l.get("session_id"))
    w.session("handoff-clear", [{"text": "ok"}], ["Read"], prompt="/clear", args=["--resume", sid])
    reqs, _, _ = w.session("handoff-next", [{"text": "ok"}], ["Read"], prompt="next", args=["--continue"])
    text = json.dumps(reqs[0], ensure_ascii=False) if reqs else ""
    check("# Resumed (auto, on /clear) — main" in text and "Next step (the brief's plan): fix verify()" in text,
          "handoff-write: after /clear the brief is not in the new context")


def handoff_command_routes_each_keyword(w):
    """`/handoff KEYWORD` reaches the model with its argument and the
    route for it."""
    routes = {"read": "| `read` or `resume` [KEY] | READ |", "resume": "| `read` or `resume` [KEY] | READ |",
              "recover": "| `recover` [KEY] | RECOVER |", "reground": "| `reground` [KEY] | REGROUND |",
              "split": "| `split` | SPLIT |", "feat-jwt": "| any other word | WRITE to that key |"}
    for word, route in routes.items():
        reqs, _, _ = w.session(f"handoff-{word}", [{"text": "ok"}], ["Read"], prompt=f"/git-handoff:handoff {word}")
        first = json.dumps(reqs[0], ensure_ascii=False) if reqs else ""
        check(f"The argument is: `{word}`" in first and route in first,
              f"handoff {word}: the model did not get the argument and its route")
    out = subprocess.run([w.claude, "plugin", "validate", PLUGIN], cwd=w.repo, env=w.env,
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0 and "commands: git-handoff:handoff" in out.stdout,
          f"claude plugin validate: {out.stdout[-300:]}{out.stderr[-300:]}")


def look_only_session_keeps_the_brief(w):
    before = write_brief(w)
    w.session("look", [
        {"tool": "Bash", "input": {"command": "git handoff resume main", "description": "resume"}},
        {"tool": "Bash", "input": {"command": "git status --short", "description": "status"}},
        {"text": "looked"},
    ], ["Bash(git handoff:*)", "Bash(git status:*)"])
    check(w.brief() == before, "look-only: SessionEnd replaced the brief")


def only_resumed_session_keeps_the_brief(w):
    before = write_brief(w)
    w.session("resumed", [{"tool": TOOL + "resume", "input": {}}, {"text": "ok"}], [TOOL + "resume"])
    check(w.brief() == before, "resumed: SessionEnd replaced the brief")


def worked_session_drafts_over_the_brief(w):
    before = write_brief(w)
    # Times are in seconds: a brief written in the second the session
    # starts counts as written during it (and is kept).
    time.sleep(1.1)
    w.session("worked", [
        {"tool": "Write", "input": {"file_path": os.path.join(w.repo, "auth.txt"), "content": "leeway 30\n"}},
        {"tool": "Bash", "input": {"command": "make test", "description": "test"}},
        {"text": "the test still fails"},
    ], ["Write", "Bash(make test:*)"])
    after = w.brief()
    check(after != before, "worked: no draft stored")
    brief = json.loads(w.git("cat-file", "-p", after))
    check(brief["mode"] == "AUTO", f"worked: mode {brief['mode']}")
    check(brief["state"]["decisions"][0] == "use <= not <", "worked: the person's decisions were lost")
    check(brief["state"]["open_risks"][0].startswith("AUTO draft over "), "worked: the draft does not say what it went over")


def self_written_brief_is_kept(w):
    w.session("wrote", [
        {"tool": "Write", "input": {"file_path": os.path.join(w.repo, "auth.txt"), "content": "leeway 30\n"}},
        {"tool": "Bash", "input": {"command": "git handoff write --done-when 'make test passes' --resume-by 'fix it' --next-check 'make test' --no-lint", "description": "hand off"}},
        {"text": "handed off"},
    ], ["Write", "Bash(git handoff:*)"])
    brief = json.loads(w.git("cat-file", "-p", "refs/handoffs/main"))
    check(brief["mode"] == "WRITE", f"wrote: the session's own brief was replaced by a {brief['mode']} one")


def session_start_on_each_source(w):
    """SessionStart on startup and resume points at the brief; after /clear
    and /compact the brief itself reaches the model (on the next prompt:
    in -p, `--continue`). No warning on Claude Code's stderr."""
    write_brief(w)
    _, lines, _ = w.session("start", [{"text": "ok"}], ["Read"])
    sid = next(l["session_id"] for l in lines if l.get("type") == "system" and l.get("session_id"))
    runs = [
        ("resume", "go on", ["--resume", sid], "A handoff brief exists for this branch ('main')"),
        ("clear", "/clear", ["--resume", sid], None),
        ("after-clear", "next", ["--continue"], "# Resumed (auto, on /clear) — main"),
        ("compact", "/compact", ["--resume", sid], None),
        ("after-compact", "next", ["--continue"], "# Resumed (auto, on /compact) — main"),
    ]
    for name, prompt, args, expected in runs:
        reqs, _, stderr = w.session(name, [{"text": "ok"}], ["Read"], prompt=prompt, args=args)
        check(not [l for l in stderr.splitlines() if l.strip()], f"{name}: Claude Code's stderr: {stderr[:300]}")
        if expected:
            check(reqs and expected in json.dumps(reqs[0], ensure_ascii=False), f"{name}: the model never got {expected!r}")
            check("Next step (the brief's plan): fix verify()" in json.dumps(reqs[0]) or name == "resume",
                  f"{name}: the brief's next step did not reach the model")


def health_signal_reaches_the_model(w):
    """The UserPromptSubmit hook: with the context past half the usable
    window (a 3,000-token window, so the mock's 1,000 input tokens are 66 %
    of its usable half), the next prompt of the session carries one line
    suggesting `git handoff reground`; the prompt after it does not (once
    per session). Off with handoff.health=false."""
    w.git("config", "handoff.contextWindow", "3000")
    _, lines, _ = w.session("health", [{"text": "ok"}], ["Read"])
    sid = next(l["session_id"] for l in lines if l.get("type") == "system" and l.get("session_id"))
    alert = "git-handoff session health: context at 66% of the usable window"
    reqs, _, stderr = w.session("health-next", [{"text": "ok"}], ["Read"], prompt="go on", args=["--resume", sid])
    check(not [l for l in stderr.splitlines() if l.strip()], f"health: Claude Code's stderr: {stderr[:300]}")
    check(reqs and alert in json.dumps(reqs[0]), "health: the alert never reached the model")
    check("git handoff reground" in json.dumps(reqs[0]), "health: the alert does not suggest reground")
    # The request holds the conversation so far: the first alert, once.
    reqs, _, _ = w.session("health-again", [{"text": "ok"}], ["Read"], prompt="go on", args=["--resume", sid])
    check(reqs and json.dumps(reqs[0]).count("git-handoff session health") == 1,
          "health: the alert came twice in one session")
    w.git("config", "handoff.health", "false")
    _, lines, _ = w.session("health-off", [{"text": "ok"}], ["Read"])
    sid = next(l["session_id"] for l in lines if l.get("type") == "system" and l.get("session_id"))
    reqs, _, _ = w.session("health-off-next", [{"text": "ok"}], ["Read"], prompt="go on", args=["--resume", sid])
    check(reqs and "git-handoff session health" not in json.dumps(reqs[0]), "health: handoff.health=false did not turn it off")


def sticky_key_across_bash_and_mcp(w):
    """One session writes `api-docs` through Bash, then a keyless write
    through the MCP server: both processes are the same session
    (CLAUDE_CODE_SESSION_ID), so the second goes to `api-docs`, not the
    branch's key."""
    partial = {"resume": {"done_when": "make docs passes", "resume_by": "document verify()"},
               "state": {"next_acceptance_check": "make docs", "rejected_paths": ["a wiki page"]}}
    w.session("sticky", [
        {"tool": "Bash", "input": {"command": "git handoff write api-docs --done-when 'make docs passes' --resume-by 'start the docs' --next-check 'make docs' --no-lint", "description": "hand off"}},
        {"tool": TOOL + "write", "input": {"brief": partial}},
        {"text": "handed off"},
    ], ["Bash(git handoff:*)", TOOL + "write"])
    check(w.brief("main") is None, "sticky: the keyless MCP write went to the branch's key")
    brief = json.loads(w.git("cat-file", "-p", "refs/handoffs/api-docs"))
    check(brief["resume"]["resume_by"] == "document verify()", f"sticky: api-docs holds {brief['resume']['resume_by']!r}")
    versions = w.handoff("log", "api-docs").strip().splitlines()
    check(len(versions) == 2, f"sticky: api-docs has {len(versions)} versions")


def installed_from_the_marketplace(w):
    """The README's install route: the marketplace manifest at the root,
    then the plugin from it; a session without --plugin-dir has it."""
    for args in (["plugin", "marketplace", "add", ROOT], ["plugin", "install", "git-handoff@git-handoff"]):
        out = subprocess.run([w.claude, *args], cwd=w.repo, env=w.env, capture_output=True, text=True, timeout=120)
        check(out.returncode == 0, f"marketplace: claude {' '.join(args)}: {out.stdout[-300:]}{out.stderr[-300:]}")
    write_brief(w)
    reqs, _, _ = w.session("installed", [{"text": "ok"}], ["Read"], plugin_dir=False)
    check(reqs and "A handoff brief exists for this branch" in json.dumps(reqs[0]),
          "marketplace: the installed plugin's SessionStart hook did not reach the model")


SCENARIOS = [
    installed_from_the_marketplace,
    startup_context_tools_and_results,
    tool_definitions_fit_in_12_kb,
    handoff_command_writes_then_clear_continues,
    handoff_command_routes_each_keyword,
    session_start_on_each_source,
    health_signal_reaches_the_model,
    sticky_key_across_bash_and_mcp,
    look_only_session_keeps_the_brief,
    only_resumed_session_keeps_the_brief,
    worked_session_drafts_over_the_brief,
    self_written_brief_is_kept,
]


def find_claude():
    if len(sys.argv) > 1:
        return os.path.abspath(sys.argv[1]) if os.sep in sys.argv[1] else sys.argv[1]
    local = os.path.join(HERE, "node_modules", ".bin", "claude")
    return local if os.path.exists(local) else shutil.which("claude")


def main():
    claude = find_claude()
    if not claude:
        print("skipped: no Claude Code CLI (npm install --prefix tests/harness/claude-code @anthropic-ai/claude-code@2.1.328)")
        return 0
    passed, failed = run_scenarios(SCENARIOS, lambda: World(claude))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
