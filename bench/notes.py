#!/usr/bin/env python3
"""Emit a `git fast-import` stream for a synthetic brief history, as
`git handoff write` leaves it (SHA-1 repositories).

    bench/notes.py VERSIONS KEYS spread|one | git fast-import --export-marks=FILE

Version i (1..V) belongs to key "k" (i % K): one compact brief line and
its lineage line (version id, blob, parents = the key's previous version,
as `git handoff write` records them) appended to a note in its own commit
of refs/notes/handoffs: with "spread" on commit i of refs/heads/main (V
commits), with "one" all on the one commit of main (one note of 2V lines,
as a session that writes often before committing leaves it). Each key's
newest version is also a blob (its stored, pretty form) with mark
1000000 + key number (for refs/handoffs/<key>), and refs/bench/next holds
one more notes commit on top: a new version of key k0, recorded over k0's
newest (blob mark 2000000), for "push after changing one key".
"""

import hashlib
import json
import sys


def out(s):
    sys.stdout.buffer.write(s.encode() if isinstance(s, str) else s)


def data(b):
    if isinstance(b, str):
        b = b.encode()
    out(b"data %d\n" % len(b))
    out(b + b"\n")


def who(n):
    return "Bench <bench@example.com> %d +0000" % (1700000000 + 60 * n)


def brief(i, k):
    t = "2026-11-30T%02d:%02d:%02dZ" % ((i // 3600) % 24, (i // 60) % 60, i % 60)
    return {
        "schema_version": "1",
        "key": "k%d" % k,
        "timestamp": t,
        "mode": "WRITE",
        "resume": {"done_when": "bench/run passes", "resume_by": "profile the walk"},
        "state": {
            "branch": "main",
            "next_acceptance_check": "bench/run",
            "worktree": {"root": "/tmp/bench", "is_linked": False, "git_common_dir": "/tmp/bench/.git"},
            "head_sha": "%040d" % i,
            "decisions": ["version %d of k%d" % (i, k)],
        },
    }


def blob_id(text):
    b = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()


def version(i, k, parent):
    """The brief's compact line, its stored form, its version id and its
    lineage line (src/store/lineage.rs: `version_id`, `line`)."""
    b = brief(i, k)
    key = b["key"]
    pretty = json.dumps(b, indent=2, ensure_ascii=False) + "\n"
    blob = blob_id(pretty)
    parents = [parent] if parent else []
    text = "git-handoff version\nkey %s\nbrief %s\n" % (key, blob)
    text += "".join("parent %s\n" % p for p in parents)
    vid = hashlib.sha1(text.encode()).hexdigest()
    compact = json.dumps(b, separators=(",", ":"), ensure_ascii=False)
    lineage = json.dumps(
        {"lineage": vid, "key": key, "brief": blob, "parents": parents, "at": b["timestamp"]},
        separators=(",", ":"),
    )
    return compact + "\n" + lineage + "\n", pretty, vid


def note_commit(ref, mark, parent, target, text, msg):
    out("commit %s\nmark :%d\ncommitter %s\n" % (ref, mark, who(mark)))
    data(msg)
    if parent:
        out("from :%d\n" % parent)
    out("N inline :%d\n" % target)
    data(text)


def main():
    versions, keys, shape = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    m = 1 if shape == "one" else versions
    for c in range(1, m + 1):
        out("commit refs/heads/main\nmark :%d\ncommitter %s\n" % (c, who(c)))
        data("commit %d" % c)
    tip, newest, every = {}, {}, []
    for i in range(1, versions + 1):
        k = i % keys
        lines, pretty, tip[k] = version(i, k, tip.get(k))
        newest[k] = pretty
        if shape == "one":
            every.append(lines)
            text, target = "".join(every), 1
        else:
            text, target = lines, i
        last = text
        note_commit("refs/notes/handoffs", m + i, m + i - 1 if i > 1 else 0, target, text, "handoff: write k%d" % k)
    for k in range(keys):
        if k in newest:
            out("blob\nmark :%d\n" % (1000000 + k))
            data(newest[k])
    lines, pretty, _ = version(versions + 1, 0, tip.get(0))
    out("blob\nmark :2000000\n")
    data(pretty)
    # On the note of main's last commit, after what it holds.
    text = ("".join(every) if shape == "one" else last) + lines
    note_commit("refs/bench/next", m + versions + 1, m + versions, 1 if shape == "one" else m, text, "handoff: write k0")


main()
