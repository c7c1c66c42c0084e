# Emit a `git fast-import` stream for a deterministic synthetic history.
#
#   awk -v commits=N -v files=F -f bench/history.awk | git fast-import
#
# Commit 1 adds F files (d*/e*/f*.txt, at most 10 per directory); every
# later commit changes one file. Every 100 commits a side commit, forked
# 6 commits earlier, is merged back, so the history has merges whose side
# parent is older than the main line (the walk must count those too).
# Commit k (counting side commits) has mark :k and committer time
# 1700000000 + 60k, so dates increase with creation order. After the main
# line, `refs/heads/diverged` forks 50 commits before the end and adds 3
# commits that are not in main's history.
function path(f) {
    return sprintf("d%d/e%d/f%d.txt", int(f / (fan * 10)), int(f / 10) % fan, f % 10)
}
function data(s) {
    printf "data %d\n%s\n", length(s), s
}
function header(ref, k) {
    printf "commit %s\nmark :%d\n", ref, k
    printf "author Bench <bench@example.com> %d +0000\n", 1700000000 + 60 * k
    printf "committer Bench <bench@example.com> %d +0000\n", 1700000000 + 60 * k
    data("commit " k)
}
function change(k,    f) {
    f = (k * 7919) % files
    printf "M 100644 inline %s\n", path(f)
    data("file " f " revision " k "\n")
}
BEGIN {
    fan = files >= 10000 ? 100 : 10
    header("refs/heads/main", 1)
    for (f = 0; f < files; f++) {
        printf "M 100644 inline %s\n", path(f)
        data("file " f " revision 1\n")
    }
    for (k = 2; k <= commits; k++) {
        if (k % 100 == 99) {
            header("refs/heads/side", k)
            printf "from :%d\n", k - 6
            change(k)
        } else if (k % 100 == 0) {
            header("refs/heads/main", k)
            printf "from :%d\nmerge :%d\n", k - 2, k - 1
            change(k)
        } else {
            header("refs/heads/main", k)
            printf "from :%d\n", k - 1
            change(k)
        }
    }
    base = commits - 50
    if (base % 100 == 99) base--
    for (i = 1; i <= 3; i++) {
        header("refs/heads/diverged", commits + i)
        if (i == 1) printf "from :%d\n", base
        change(commits + i)
    }
    printf "reset refs/heads/side\nfrom 0000000000000000000000000000000000000000\n\n"
}
