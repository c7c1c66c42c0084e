#!/usr/bin/env python3
"""Conformance of git-handoff's shipped Codex CLI and Gemini CLI configs
(contrib/codex/, contrib/gemini/) against the real CLIs, offline: each
config is installed the documented way in a scratch HOME, loaded by the
CLI's own `mcp list`, then a session runs against a scripted mock model on
loopback (mock.py) and each scenario checks what the model received (the
request bodies) and what git-handoff answered. Codex's hooks (the shipped
config.toml's [[hooks.*]] tables) are trusted as its /hooks does, through
`codex app-server` (hooks/list, then config/batchWrite of hooks.state).

Usage: tests/harness/agents/run.py [codex|gemini ...]   (default: both)
The CLIs: $CODEX / $GEMINI, else tests/harness/{codex,gemini}/node_modules
after `npm ci --prefix tests/harness/codex` and
`npm ci --prefix tests/harness/gemini` (versions pinned in their
package.json and VERSION), else `codex` / `gemini` on PATH; a CLI that is
not found is skipped with a message. Needs git-handoff on PATH (a build of
this checkout), python3 >= 3.11 and, for Gemini, node >= 20.
GIT_HANDOFF_KEEP=1 keeps each scenario's scratch directory.
Exits 1 with the failing check named; prints "N passed, 0 failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(HARNESS))
sys.path.insert(0, os.path.join(HARNESS, "common"))
from suite import Failed, check, run_scenarios  # noqa: E402
import suite  # noqa: E402

CONTRIB = os.path.join(ROOT, "contrib")
TOOLS = ["resume", "reground", "brief", "list", "show", "log", "write", "recover", "lint", "validate", "usage"]
NEXT_STEP = "fix verify() in auth.rs"
ENV = {
    "TERM": "xterm-256color", "COLORTERM": "truecolor", "NO_BROWSER": "1",
}
DROP = ["GIT_DIR", "GIT_WORK_TREE", "GIT_HANDOFF_SESSION", "GIT_HANDOFF_KEY", "CODEX_HOME", "OPENAI_API_KEY",
        "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "CLAUDE_CODE_SESSION_ID"]
TIMEOUT = 60


class World(suite.World):
    """A scratch HOME and TMPDIR (apart from HOME: Codex warns when its home
    is under the temporary directory), and a repository with one commit and
    one brief for its branch (main)."""

    def __init__(self, cli):
        self.cli = cli
        super().__init__("git-handoff-agents-", ENV, DROP, tmpdir=True)
        self.git("handoff", "write", "--done-when", "make test passes", "--resume-by", NEXT_STEP,
                 "--next-check", "make test", "--decision", "use <= not <", "--no-lint", "--no-narrative")

    def brief(self):
        return self.git("rev-parse", "refs/handoffs/main").strip()

    def run(self, *args, env=None):
        return subprocess.run([self.cli, *args], cwd=self.repo, env=env or self.env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=TIMEOUT)

    def session(self, name, turns, args, env_for_port):
        """Run the CLI against the mock with these scripted turns; the
        requests the model got (path and body), and the CLI's output."""
        requests, out = self.with_mock(os.path.join(HERE, "mock.py"), name, turns,
                                       lambda port: self.run(*args, env=env_for_port(port)))
        check(out.returncode == 0, f"{name}: exited {out.returncode}: {out.stdout[-300:]}{out.stderr[-500:]}")
        return requests, out


def no_nonstandard_formats(what, value):
    text = json.dumps(value)
    check('"format": "uint' not in text and '"format":"uint' not in text,
          f"{what}: a non-standard schema format reached the model")


# Codex CLI ---------------------------------------------------------------

def codex_home(w, path=None):
    home = path or os.path.join(w.home, ".codex")
    os.makedirs(home, exist_ok=True)
    w.env["CODEX_HOME"] = home
    return home


def codex_config(w, home, port=None):
    """The shipped config as ~/.codex/config.toml; with a port, merged after
    a model provider that points at the mock (top-level keys first: the
    shipped snippet is a table)."""
    shipped = open(os.path.join(CONTRIB, "codex", "config.toml")).read()
    head = ""
    if port:
        head = (f'model = "gpt-5.5"\nmodel_provider = "mock"\napproval_policy = "never"\n\n'
                f'[model_providers.mock]\nname = "mock"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
                f'wire_api = "responses"\nenv_key = "MOCK_API_KEY"\n\n')
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(head + shipped)


def codex_exec(w, name, turns, home, trust=False, args=()):
    """`codex exec` against the mock; with trust, the shipped hooks trusted
    first (the config is written anew for each session, and the trust
    lives in it)."""
    def env(port):
        codex_config(w, home, port)
        if trust:
            codex_trust_hooks(w)
        return dict(w.env, MOCK_API_KEY="sk-mock")
    requests, out = w.session(name, turns, ["exec", "--json", *args, f"scenario {name}"], env)
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    errors = [e for e in events if e.get("type") == "error" or (e.get("item") or {}).get("type") == "error"]
    check(not errors, f"{name}: Codex reported {json.dumps(errors)[:400]}")
    noise = [line for line in out.stderr.splitlines() if "WARN" in line or "ERROR" in line]
    check(not noise, f"{name}: Codex warned: {noise[:3]}")
    return requests, events


class AppServer:
    """`codex app-server` over stdio (JSON-RPC lines): what the TUI's /hooks
    uses to list the hooks and record the person's trust."""

    def __init__(self, w):
        self.proc = subprocess.Popen([w.cli, "app-server"], cwd=w.repo, env=w.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.timer = threading.Timer(TIMEOUT, self.proc.kill)
        self.timer.start()
        self.id = 0
        self.call("initialize", {"clientInfo": {"name": "git-handoff-harness", "version": "0"}})
        self.send({"method": "initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def call(self, method, params):
        self.id += 1
        self.send({"id": self.id, "method": method, "params": params})
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == self.id:
                check("error" not in message, f"app-server {method}: {json.dumps(message)[:300]}")
                return message["result"]
        raise Failed(f"app-server {method}: no answer")

    def close(self):
        self.timer.cancel()
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


HOOKS = {"sessionStart": "git handoff hook session-start", "preCompact": "git handoff hook pre-compact",
         "sessionEnd": "git handoff hook session-end"}


def codex_hooks(server, w):
    """The hooks Codex finds for the repository (`hooks/list`), checked to
    be the shipped three, loaded without a warning or an error."""
    entries = server.call("hooks/list", {"cwds": [w.repo]})["data"]
    check(len(entries) == 1, f"hooks/list: {json.dumps(entries)[:300]}")
    entry = entries[0]
    check(not entry["warnings"] and not entry["errors"],
          f"hooks/list: warnings {entry['warnings']}, errors {entry['errors']}")
    hooks = entry["hooks"]
    found = {h["eventName"]: h.get("command") for h in hooks}
    check(found == HOOKS, f"hooks/list: {found} (shipped: {HOOKS})")
    for hook in hooks:
        check(hook["enabled"] and hook["source"] == "user" and hook["handlerType"] == "command",
              f"hooks/list: {json.dumps(hook)[:300]}")
    return hooks


def codex_trust_hooks(w):
    """Trust the shipped hooks as a person does in /hooks: each hook's
    current hash under hooks.state in the user's config.toml."""
    server = AppServer(w)
    try:
        hooks = codex_hooks(server, w)
        server.call("config/batchWrite", {"edits": [{
            "keyPath": "hooks.state", "mergeStrategy": "upsert",
            "value": {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}}]})
        status = {h["eventName"]: h["trustStatus"] for h in codex_hooks(server, w)}
        check(set(status.values()) == {"trusted"}, f"hooks/list after trusting: {status}")
    finally:
        server.close()


def mcp_result(events, tool):
    done = [e["item"] for e in events if e.get("type") == "item.completed"
            and e["item"].get("type") == "mcp_tool_call" and e["item"].get("tool") == tool]
    check(done, f"no completed {tool} call among Codex's events")
    check(done[0].get("status") == "completed" and not done[0].get("error"),
          f"the {tool} call failed: {json.dumps(done[0])[:300]}")
    return done[0]


def codex_loads_the_shipped_config(w):
    """`codex mcp list` / `get` read contrib/codex/config.toml as installed,
    with no warning, as the server the file describes."""
    home = codex_home(w)
    codex_config(w, home)
    shipped = tomllib.load(open(os.path.join(CONTRIB, "codex", "config.toml"), "rb"))["mcp_servers"]["git-handoff"]
    out = w.run("mcp", "list", "--json")
    check(out.returncode == 0, f"codex mcp list --json exited {out.returncode}: {out.stderr[-300:]}")
    check(not out.stderr.strip(), f"codex mcp list warned: {out.stderr.strip()[:300]}")
    servers = {s["name"]: s for s in json.loads(out.stdout)}
    check("git-handoff" in servers, f"codex mcp list: no git-handoff server in {list(servers)}")
    server = servers["git-handoff"]
    check(server["enabled"], "codex mcp list: git-handoff is disabled")
    transport = server["transport"]
    check(transport["type"] == "stdio" and transport["command"] == shipped["command"]
          and transport["args"] == shipped["args"], f"codex mcp list: transport {transport}")
    check(transport.get("env_vars", []) == shipped.get("env_vars", []),
          f"codex mcp list: env_vars {transport.get('env_vars')} (shipped {shipped.get('env_vars')})")
    out = w.run("mcp", "list")
    check(out.returncode == 0 and not out.stderr.strip(), f"codex mcp list: {out.stderr.strip()[:300]}")
    check("git-handoff" in out.stdout and "enabled" in out.stdout, f"codex mcp list printed {out.stdout[:300]}")
    out = w.run("mcp", "get", "git-handoff")
    check(out.returncode == 0 and not out.stderr.strip(), f"codex mcp get: {out.stderr.strip()[:300]}")
    check("transport: stdio" in out.stdout and "args: handoff mcp" in out.stdout, f"codex mcp get printed {out.stdout[:300]}")


def codex_finds_the_tools_and_resumes(w):
    """With contrib/codex/AGENTS.md in the project: the instructions and the
    deferred git-handoff namespace reach the model; tool_search loads the
    tools with their descriptions and schemas; resume's render comes back."""
    shutil.copy(os.path.join(CONTRIB, "codex", "AGENTS.md"), os.path.join(w.repo, "AGENTS.md"))
    before = w.brief()
    home = codex_home(w)
    reqs, events = codex_exec(w, "codex-resume", [
        {"tool_search": "git-handoff resume handoff brief", "limit": 20},
        {"tool": "resume", "input": {}},
        {"text": "resumed"},
    ], home)
    reqs = [r["body"] for r in reqs if r["body"].get("tools")]
    check(len(reqs) >= 3, f"codex-resume: {len(reqs)} model calls")
    first = json.dumps(reqs[0]["input"])
    check("## Handoffs (git-handoff)" in first, "codex-resume: contrib/codex/AGENTS.md did not reach the model")
    check("mcp__git_handoff" in first or any(t.get("name") == "mcp__git_handoff" for t in reqs[0]["tools"]),
          "codex-resume: the git-handoff tools are not offered (not even deferred)")
    check("keeps the working state of a coding session" in json.dumps(reqs[0]),
          "codex-resume: the server's instructions did not reach the model")
    found = [t for item in reqs[1]["input"] if item.get("type") == "tool_search_output"
             for t in item.get("tools") or [] if t.get("name") == "mcp__git_handoff"]
    check(found, "codex-resume: tool_search did not return the git-handoff namespace")
    tools = {t["name"]: t for t in found[0].get("tools") or []}
    for name in TOOLS:
        check(name in tools, f"codex-resume: tool {name} not returned by tool_search")
        check(tools[name].get("description"), f"codex-resume: tool {name} has no description")
        check((tools[name].get("parameters") or {}).get("type") == "object", f"codex-resume: tool {name} has no schema")
    check("description" in json.dumps(tools["resume"]["parameters"]), "codex-resume: resume's schema carries no descriptions")
    no_nonstandard_formats("codex-resume", tools)
    outputs = [item for item in reqs[2]["input"] if item.get("type") == "function_call_output"]
    check(outputs, "codex-resume: no tool result came back to the model")
    output = json.dumps(outputs[-1])
    check("# Resume" in output, "codex-resume: resume's render did not reach the model")
    check(NEXT_STEP in output, "codex-resume: the brief's next step did not reach the model")
    mcp_result(events, "resume")
    check(w.brief() == before, "codex-resume: the brief changed")


def codex_usage_reads_this_session(w):
    """With CODEX_HOME away from ~/.codex, `usage` (over MCP) reads this
    session's transcript, not a stale one under ~/.codex/sessions."""
    stale = os.path.join(w.home, ".codex", "sessions", "2020", "01", "01")
    os.makedirs(stale)
    with open(os.path.join(stale, "rollout-2020-01-01T00-00-00-stale.jsonl"), "w") as f:
        f.write(json.dumps({"type": "session_meta", "payload": {"id": "stale", "cwd": w.repo}}) + "\n")
    home = codex_home(w, os.path.join(w.dir, "codex-home"))
    _, events = codex_exec(w, "codex-usage", [
        {"tool_search": "git-handoff usage context window", "limit": 20},
        {"tool": "usage", "input": {}},
        {"text": "measured"},
    ], home)
    thread = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
    result = mcp_result(events, "usage")
    transcript = (result["result"].get("structured_content") or {}).get("transcript", "")
    check(transcript.startswith(os.path.join(home, "sessions")) and thread and thread[0] in transcript,
          f"codex-usage: usage read {transcript or json.dumps(result['result'])[:300]}, not this session's "
          f"transcript under $CODEX_HOME/sessions (is CODEX_HOME passed to the server? env_vars)")


BRIEF_LINE = "A handoff brief exists for this branch ('main'); run `git handoff resume main` to load it."
# The model's commands run unsandboxed in the scratch repository (the
# sandbox, bubblewrap, is not what these scenarios test) and in a plain
# shell: a login shell's /etc/profile may reset PATH, losing git-handoff.
FULL_ACCESS = ("--sandbox", "danger-full-access", "-c", "allow_login_shell=false")


def codex_loads_the_shipped_hooks(w):
    """The app server (what /hooks shows) finds the shipped hooks in
    ~/.codex/config.toml, SessionStart, PreCompact and SessionEnd, with no
    warning (SessionEnd's timeout within Codex's 3 s cap), untrusted until
    a person trusts them, then trusted."""
    home = codex_home(w)
    codex_config(w, home)
    server = AppServer(w)
    try:
        hooks = codex_hooks(server, w)
    finally:
        server.close()
    status = {h["eventName"]: h["trustStatus"] for h in hooks}
    check(set(status.values()) == {"untrusted"}, f"hooks/list before trusting: {status}")
    timeout = [h["timeoutSec"] for h in hooks if h["eventName"] == "sessionEnd"]
    check(timeout == [3], f"hooks/list: SessionEnd timeout {timeout}")
    codex_trust_hooks(w)


def developer_texts(body):
    return [c.get("text", "") for item in body["input"] if item.get("role") == "developer"
            for c in item.get("content") or []]


def codex_session_start_reaches_the_model(w):
    """Untrusted, the hooks do not run (and `codex exec` says nothing);
    trusted, SessionStart's additionalContext reaches the model as a
    developer message before the prompt."""
    home = codex_home(w)
    before = w.brief()
    reqs, _ = codex_exec(w, "codex-untrusted", [{"text": "hello"}], home)
    check(reqs and not any(BRIEF_LINE in t for t in developer_texts(reqs[0]["body"])),
          "codex-untrusted: an untrusted SessionStart hook ran")
    reqs, _ = codex_exec(w, "codex-session-start", [{"text": "hello"}], home, trust=True)
    check(reqs, "codex-session-start: no model call")
    body = reqs[0]["body"]
    check(any(BRIEF_LINE in t for t in developer_texts(body)),
          f"codex-session-start: the SessionStart context did not reach the model: {developer_texts(body)[-2:]}")
    text = json.dumps(body["input"])
    check(text.index("A handoff brief exists") < text.index("scenario codex-session-start"),
          "codex-session-start: the context came after the prompt")
    check(w.brief() == before, "codex-session-start: the brief changed")


def commands(events):
    return [(e["item"]["command"], e["item"].get("exit_code")) for e in events if e.get("type") == "item.completed"
            and e["item"].get("type") == "command_execution"]


def codex_look_only_session_keeps_the_brief(w):
    """A session that only looks (`git status`, `git handoff resume`) ends
    with the SessionEnd hook storing nothing: the brief stays."""
    home = codex_home(w)
    before = w.brief()
    # Times are in seconds: a brief written in the second the session
    # starts counts as written during it (and is kept anyway).
    time.sleep(1.1)
    _, events = codex_exec(w, "codex-look-only", [
        {"tool": "exec_command", "input": {"cmd": "git status"}},
        {"tool": "exec_command", "input": {"cmd": "git handoff resume main"}},
        {"text": "looked"},
    ], home, trust=True, args=FULL_ACCESS)
    ran = commands(events)
    check(len(ran) == 2 and all(code == 0 for _, code in ran), f"codex-look-only: commands {ran}")
    check(w.brief() == before, "codex-look-only: SessionEnd replaced the brief")


def codex_worked_session_drafts_over_the_brief(w):
    """A session that edits a file (apply_patch) and runs a failing test
    ends with the SessionEnd hook storing an AUTO draft of its rollout over
    the brief: the person's fields kept, what the session did added."""
    home = codex_home(w)
    before = w.brief()
    time.sleep(1.1)
    patch = ("*** Begin Patch\n*** Update File: Makefile\n@@\n test:\n"
             "+\t@echo 'leeway 30'\n*** End Patch\n")
    _, events = codex_exec(w, "codex-worked", [
        {"custom": "apply_patch", "input": patch},
        {"tool": "exec_command", "input": {"cmd": "make test"}},
        {"text": "the test still fails"},
    ], home, trust=True, args=FULL_ACCESS)
    edits = [e["item"] for e in events if e.get("type") == "item.completed" and e["item"].get("type") == "file_change"]
    check(edits and edits[0]["status"] == "completed", f"codex-worked: the edit failed: {json.dumps(edits)[:300]}")
    check([code for _, code in commands(events)] == [2], f"codex-worked: commands {commands(events)}")
    after = w.brief()
    check(after != before, "codex-worked: no draft stored")
    brief = json.loads(w.git("cat-file", "-p", after))
    check(brief["mode"] == "AUTO", f"codex-worked: mode {brief['mode']}")
    check(brief["resume"]["resume_by"] == NEXT_STEP and brief["state"]["decisions"] == ["use <= not <"],
          "codex-worked: the person's fields were lost")
    risks = brief["state"].get("open_risks") or []
    check(risks and risks[0].startswith("AUTO draft over "), f"codex-worked: open risks {risks[:1]}")
    check(any("make test" in r and "exited 2" in r for r in risks), "codex-worked: the failing test is not among the risks")
    check({"cmd": "make test", "result": "fail"} in brief["state"].get("tests", []),
          f"codex-worked: tests {brief['state'].get('tests')}")
    check([f["path"] for f in brief.get("files_read_first", [])] == ["Makefile"],
          f"codex-worked: files {brief.get('files_read_first')}")
    thread = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
    pointer = brief["resume"].get("history_pointer", "")
    check(thread and pointer.startswith(os.path.join(home, "sessions")) and thread[0] in pointer,
          f"codex-worked: the draft is not of this session's rollout: {pointer}")


def codex_compaction_brings_the_brief_back(w):
    """An automatic compaction (a low model_auto_compact_token_limit) in a
    session that edited a file: PreCompact stores a draft over the brief,
    then SessionStart (source compact) brings it back to the model in the
    compacted conversation, marked AUTO, the person's next step kept."""
    home = codex_home(w)
    time.sleep(1.1)
    patch = ("*** Begin Patch\n*** Update File: Makefile\n@@\n test:\n"
             "+\t@echo 'leeway 30'\n*** End Patch\n")
    reqs, _ = codex_exec(w, "codex-compact", [
        {"custom": "apply_patch", "input": patch},
        {"text": "compacted"},
    ], home, trust=True, args=FULL_ACCESS + ("-c", "model_auto_compact_token_limit=900"))
    bodies = [r["body"] for r in reqs]
    summary = [i for i, b in enumerate(bodies) if not b.get("tools")]
    check(summary, "codex-compact: Codex did not compact")
    after = [b for b in bodies[summary[0] + 1:] if b.get("tools")]
    check(after, "codex-compact: no model call after the compaction")
    injected = [t for t in developer_texts(after[0]) if t.startswith("# Resumed (auto, on /compact) — main")]
    check(injected, f"codex-compact: the brief did not reach the model after the compaction: "
                    f"{developer_texts(after[0])[-1:]}")
    for part in ["!! AUTO:", "AUTO draft over", NEXT_STEP, "Makefile — edited"]:
        check(part in injected[0], f"codex-compact: {part!r} not in what reached the model: {injected[0][:500]}")
    if not any("Context is about to be compacted" in json.dumps(b) for b in bodies):
        w.notes.append("PreCompact's systemMessage (the reminder to write a handoff) does not reach the model, "
                       "nor codex exec's output")
    brief = json.loads(w.git("cat-file", "-p", w.brief()))
    check(brief["mode"] == "AUTO", f"codex-compact: mode {brief['mode']}")
    # SessionEnd's draft goes over the person's version, as PreCompact's did.
    check(brief["resume"]["resume_by"] == NEXT_STEP and brief["state"].get("decisions", [None])[0] == "use <= not <",
          f"codex-compact: SessionEnd's draft dropped the person's next step or decisions: {brief['resume']}, "
          f"{brief['state'].get('decisions')}")


# Gemini CLI --------------------------------------------------------------

def gemini_setup(w):
    """The shipped settings as the project's .gemini/settings.json (as
    docs/agents.md says), the project trusted (~/.gemini/trustedFolders.json),
    and the user settings a scratch HOME needs: an API-key auth, no
    telemetry, no update check."""
    os.makedirs(os.path.join(w.repo, ".gemini"))
    shutil.copy(os.path.join(CONTRIB, "gemini", "settings.json"), os.path.join(w.repo, ".gemini", "settings.json"))
    user = os.path.join(w.home, ".gemini")
    os.makedirs(user)
    with open(os.path.join(user, "trustedFolders.json"), "w") as f:
        json.dump({w.repo: "TRUST_FOLDER"}, f)
    with open(os.path.join(user, "settings.json"), "w") as f:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "privacy": {"usageStatisticsEnabled": False},
                   "telemetry": {"enabled": False},
                   "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}, f)
    w.env["GEMINI_API_KEY"] = "mock-key"


BAD = ["Invalid configuration", "Invalid hook", "Discarding invalid hook", "is not an array", "missing command field"]


def gemini_loads_the_shipped_config(w):
    """`gemini mcp list` validates the settings (hooks block included: the
    control below shows a bad one is reported) and connects the server."""
    gemini_setup(w)
    out = w.run("mcp", "list")
    text = out.stdout + out.stderr
    check(out.returncode == 0, f"gemini mcp list exited {out.returncode}: {text[-300:]}")
    for bad in BAD + ["Warning", "Error", "untrusted"]:
        check(bad not in text, f"gemini mcp list: {bad!r} in {text.strip()[:400]}")
    check("git-handoff: git handoff mcp (stdio) - Connected" in text, f"gemini mcp list printed {text.strip()[:300]}")
    # Control: the same command reports a hooks block that breaks the schema.
    path = os.path.join(w.repo, ".gemini", "settings.json")
    settings = json.load(open(path))
    settings["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = "soon"
    json.dump(settings, open(path, "w"))
    out = w.run("mcp", "list")
    check("Invalid configuration" in out.stdout + out.stderr,
          "gemini mcp list no longer validates the hooks block: the clean run above proves nothing")


def gemini_session_start_and_resume(w):
    """`gemini -p`: the SessionStart hook's context, the tools with their
    descriptions and schemas and the server's instructions reach the model;
    resume's render comes back; the hooks load without a warning."""
    gemini_setup(w)
    before = w.brief()
    policy = os.path.join(w.dir, "allow-git-handoff.toml")
    with open(policy, "w") as f:
        # Headless Gemini offers no tool that would ask for approval.
        f.write('[[rule]]\ntoolName = "mcp_git-handoff_*"\ndecision = "allow"\npriority = 100\n')
    reqs, out = w.session("gemini-resume", [{"tool": "resume", "input": {}}, {"text": "resumed"}],
                          ["-p", "scenario gemini-resume", "-o", "stream-json", "--policy", policy],
                          lambda port: dict(w.env, GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}"))
    for bad in BAD:
        check(bad not in out.stderr, f"gemini-resume: {bad!r} in {out.stderr[:400]}")
    reqs = [r["body"] for r in reqs if r["body"].get("tools")]
    check(len(reqs) >= 2, f"gemini-resume: {len(reqs)} model calls with tools")
    contents = json.dumps(reqs[0]["contents"])
    check("<hook_context>" in contents and "A handoff brief exists for this branch" in contents,
          "gemini-resume: the SessionStart hook's context did not reach the model")
    check("instructions provided by the tool server 'git-handoff'" in contents
          and "keeps the working state of a coding session" in contents,
          "gemini-resume: the server's instructions did not reach the model")
    decls = {f["name"]: f for t in reqs[0]["tools"] for f in t.get("functionDeclarations") or []}
    for name in TOOLS:
        decl = decls.get("mcp_git-handoff_" + name)
        check(decl, f"gemini-resume: tool {name} not offered to the model")
        check(decl.get("description"), f"gemini-resume: tool {name} has no description")
        schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
        check(str(schema.get("type")).lower() == "object", f"gemini-resume: tool {name} has no schema")
    no_nonstandard_formats("gemini-resume", decls)
    responses = [p["functionResponse"] for c in reqs[1]["contents"] for p in c.get("parts") or []
                 if "functionResponse" in p]
    check(responses, "gemini-resume: no tool result came back to the model")
    output = json.dumps(responses[-1], ensure_ascii=False)
    check("# Resume" in output, f"gemini-resume: resume's render did not reach the model: {output[:300]}")
    check(NEXT_STEP in output, "gemini-resume: the brief's next step did not reach the model")
    check(w.brief() == before, "gemini-resume: the brief changed")
    reminders = out.stderr.count("Context is about to be compacted")
    if reminders:
        w.notes.append(f"the PreCompress reminder fired {reminders}x in a 2-turn session that compressed nothing "
                       "(Gemini fires PreCompress before its threshold check)")


CLIS = {
    "codex": ("CODEX", "@openai/codex", [codex_loads_the_shipped_config, codex_finds_the_tools_and_resumes,
                                         codex_usage_reads_this_session, codex_loads_the_shipped_hooks,
                                         codex_session_start_reaches_the_model, codex_look_only_session_keeps_the_brief,
                                         codex_worked_session_drafts_over_the_brief,
                                         codex_compaction_brings_the_brief_back]),
    "gemini": ("GEMINI", "@google/gemini-cli", [gemini_loads_the_shipped_config, gemini_session_start_and_resume]),
}


def find(name, var):
    if os.environ.get(var):
        path = shutil.which(os.environ[var])
        return os.path.abspath(path) if path else None
    local = os.path.join(HARNESS, name, "node_modules", ".bin", name)
    return local if os.path.exists(local) else shutil.which(name)


def main():
    names = sys.argv[1:] or list(CLIS)
    for name in names:
        if name not in CLIS:
            print(f"unknown CLI {name!r}: {' or '.join(CLIS)}")
            return 2
    if not shutil.which("git-handoff"):
        print("FAILED: git-handoff is not on PATH (put a build of this checkout there)")
        return 1
    passed, failed = 0, 0
    for name in names:
        var, package, scenarios = CLIS[name]
        cli = find(name, var)
        if not cli:
            print(f"skipped {name}: no {name} binary (npm ci --prefix tests/harness/{name}, or set {var})")
            continue
        with tempfile.TemporaryDirectory(prefix="git-handoff-agents-") as scratch:
            env = dict(os.environ, HOME=scratch, CODEX_HOME=scratch)
            version = subprocess.run([cli, "--version"], env=env, capture_output=True, text=True).stdout.strip()
        print(f"{name}: {cli} ({version})")
        ran = run_scenarios(scenarios, lambda: World(cli))
        passed, failed = passed + ran[0], failed + ran[1]
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
