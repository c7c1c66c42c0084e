# Emit a Claude Code transcript (JSON lines) of about MIB MiB: a long,
# healthy session — turn after turn a new request, a file read, a search,
# edits, a test run with its output — whose context ends at PERCENT % of a
# 200,000-token window less the auto-compact reserve (167,000 tokens), for
# bench/run's `hook user-prompt-submit` row.
#
#   awk -v mib=MIB -v cwd=DIR -v percent=P -f bench/transcript.awk
function pad(n,    s) {
    s = ""
    while (length(s) < n) s = s "fn step() { let value = compute(input, 42); assert!(value > 0); }\\n"
    return substr(s, 1, n)
}
function usage(tokens) {
    return "\"usage\":{\"input_tokens\":6,\"cache_read_input_tokens\":" tokens - 6 ",\"cache_creation_input_tokens\":0,\"output_tokens\":120}"
}
function assistant(turn, tokens, content) {
    printf "{\"parentUuid\":\"p%d\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"%s\",\"sessionId\":\"bench\",\"version\":\"2.1.328\",\"gitBranch\":\"main\",\"type\":\"assistant\",\"uuid\":\"a%d\",\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"message\":{\"id\":\"msg_%d\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[%s],\"stop_reason\":\"tool_use\",%s}}\n", turn, cwd, turn, turn, content, usage(tokens)
}
function tool(name, input) {
    return "{\"type\":\"tool_use\",\"id\":\"toolu_" name "\",\"name\":\"" name "\",\"input\":" input "}"
}
function result(turn, text) {
    printf "{\"parentUuid\":\"a%d\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"%s\",\"sessionId\":\"bench\",\"type\":\"user\",\"uuid\":\"r%d\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"toolu_1\",\"type\":\"tool_result\",\"content\":\"%s\"}]}}\n", turn, cwd, turn, text
}
BEGIN {
    target = mib * 1024 * 1024
    # Bytes per turn, about 10,100: 4 KiB of read output, 2 KiB of test
    # output and the lines around them.
    turns = int(target / 10100)
    last = int(167000 * percent / 100)
    for (t = 1; t <= turns; t++) {
        tokens = 20000 + int((last - 20000) * t / turns)
        file = cwd "/src/module" t ".rs"
        printf "{\"parentUuid\":null,\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"%s\",\"sessionId\":\"bench\",\"type\":\"user\",\"uuid\":\"u%d\",\"message\":{\"role\":\"user\",\"content\":\"now carry out step %d of the plan in module %d\"}}\n", cwd, t, t, t
        assistant(t, tokens, tool("Read", "{\"file_path\":\"" file "\"}"))
        result(t, pad(4096))
        assistant(t, tokens, tool("Grep", "{\"pattern\":\"step" t "\",\"path\":\"" cwd "/src\"}"))
        result(t, "src/module" t ".rs:1:fn step" t "()")
        assistant(t, tokens, tool("Edit", "{\"file_path\":\"" file "\",\"old_string\":\"a\",\"new_string\":\"b\"}"))
        result(t, "The file has been updated.")
        assistant(t, tokens, tool("Bash", "{\"command\":\"cargo test module" t "\"}"))
        result(t, pad(2048))
        assistant(t, tokens, "{\"type\":\"text\",\"text\":\"Step " t " is done; the tests pass.\"}")
    }
}
