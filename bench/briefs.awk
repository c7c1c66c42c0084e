# Emit a `git fast-import` stream of N valid briefs (schema version "1")
# as blobs with marks :1..:N, for `git update-ref --stdin` to point
# refs/handoffs/brief-NNNNN at.
#
#   awk -v count=N -v head=SHA -v root=DIR -v common=DIR -f bench/briefs.awk
function data(s) {
    printf "data %d\n%s\n", length(s), s
}
BEGIN {
    for (i = 1; i <= count; i++) {
        key = sprintf("brief-%05d", i)
        day = 1 + i % 28
        json = "{\n" \
            "  \"schema_version\": \"1\",\n" \
            "  \"key\": \"" key "\",\n" \
            "  \"timestamp\": \"2026-10-" sprintf("%02d", day) "T12:00:00Z\",\n" \
            "  \"mode\": \"WRITE\",\n" \
            "  \"resume\": {\n" \
            "    \"done_when\": \"cargo test thread_" i " passes\",\n" \
            "    \"resume_by\": \"continue thread " i "\"\n" \
            "  },\n" \
            "  \"state\": {\n" \
            "    \"branch\": \"feat/thread-" i "\",\n" \
            "    \"next_acceptance_check\": \"cargo test thread_" i "\",\n" \
            "    \"worktree\": {\n" \
            "      \"root\": \"" root "\",\n" \
            "      \"is_linked\": false,\n" \
            "      \"git_common_dir\": \"" common "\"\n" \
            "    },\n" \
            "    \"head_sha\": \"" head "\",\n" \
            "    \"decisions\": [\n" \
            "      \"keep the public API\"\n" \
            "    ]\n" \
            "  },\n" \
            "  \"files_read_first\": [\n" \
            "    {\n" \
            "      \"path\": \"src/thread_" i ".rs\",\n" \
            "      \"why\": \"the work in progress\"\n" \
            "    }\n" \
            "  ]\n" \
            "}\n"
        printf "blob\nmark :%d\n", i
        data(json)
    }
}
