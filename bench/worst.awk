# bench/worst.awk: one line of the worst shape for redaction, `mib` MiB of
# `api_key=<23 generated letters and digits, then a digit>` pairs (every
# pair a finding that wakes the generic rules; a value of letters only is
# no secret to them), deterministic: the Park-Miller generator, exact in
# double precision, not rand().
# Usage: awk -v mib=8 -f bench/worst.awk > worst.txt
BEGIN {
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    total = mib * 1024 * 1024
    seed = 12345
    size = 0
    line = ""
    while (size < total) {
        value = ""
        for (i = 0; i < 23; i++) {
            seed = (seed * 16807) % 2147483647
            value = value substr(alnum, seed % 62 + 1, 1)
        }
        value = value (seed % 10)
        pair = "api_key=" value " "
        line = line pair
        size += length(pair)
        if (length(line) >= 65536) {
            printf "%s", line
            line = ""
        }
    }
    printf "%s\n", line
}
