# Emit a `git fast-import` stream for a synthetic brief history, as plain
# git would hold it after many `git handoff write`s.
#
#   awk -v versions=V -v keys=K -v shape=spread|one -f bench/notes.awk |
#       git fast-import --export-marks=FILE
#
# Version i (1..V) belongs to key "k" (i % K) and is one compact brief line
# appended to a note in its own commit of refs/notes/handoffs: with
# shape=spread on commit i of refs/heads/main (V commits), with shape=one
# all on the one commit of main (one note of V lines, as a session that
# writes often before committing leaves it). Each key's newest version is
# also a blob with mark 1000000 + key number (for refs/handoffs/<key>), and
# refs/bench/next holds one more notes commit on top: a new version of key
# k0 (blob mark 2000000), for "push after changing one key".
function data(s) {
    printf "data %d\n%s\n", length(s), s
}
function who(k) {
    return sprintf("Bench <bench@example.com> %d +0000", 1700000000 + 60 * k)
}
function line(i, k,    t) {
    t = sprintf("2026-11-30T%02d:%02d:%02dZ", int(i / 3600) % 24, int(i / 60) % 60, i % 60)
    return sprintf("{\"schema_version\":\"1\",\"key\":\"k%d\",\"timestamp\":\"%s\",\"mode\":\"WRITE\",\"resume\":{\"done_when\":\"bench/run passes\",\"resume_by\":\"profile the walk\"},\"state\":{\"branch\":\"main\",\"next_acceptance_check\":\"bench/run\",\"worktree\":{\"root\":\"/tmp/bench\",\"is_linked\":false,\"git_common_dir\":\"/tmp/bench/.git\"},\"head_sha\":\"%040d\",\"decisions\":[\"version %d of k%d\"]}}", k, t, i, i, k)
}
function note_commit(ref, mark, parent, target, text, msg) {
    printf "commit %s\nmark :%d\ncommitter %s\n", ref, mark, who(mark)
    data(msg)
    if (parent) printf "from :%d\n", parent
    printf "N inline :%d\n", target
    data(text)
}
BEGIN {
    m = shape == "one" ? 1 : versions
    for (c = 1; c <= m; c++) {
        printf "commit refs/heads/main\nmark :%d\ncommitter %s\n", c, who(c)
        data("commit " c)
    }
    all = ""
    for (i = 1; i <= versions; i++) {
        k = i % keys
        l = line(i, k)
        newest[k] = l
        if (shape == "one") {
            all = all l "\n"
            text = all
            target = 1
        } else {
            text = l "\n"
            target = i
        }
        note_commit("refs/notes/handoffs", m + i, i > 1 ? m + i - 1 : 0, target, text, "handoff: write k" k)
    }
    for (k = 0; k < keys; k++) {
        if (k in newest) {
            printf "blob\nmark :%d\n", 1000000 + k
            data(newest[k] "\n")
        }
    }
    l = line(versions + 1, 0)
    printf "blob\nmark :2000000\n"
    data(l "\n")
    note_commit("refs/bench/next", m + versions + 1, m + versions, shape == "one" ? 1 : m, (shape == "one" ? all : "") l "\n", "handoff: write k0")
}
