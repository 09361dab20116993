#!/bin/sh
# House checks: formatting, banned calls, no writable global data in the library.
# Usage: scripts/lint.sh build/libtidesim.a
set -eu
lib=${1:-build/libtidesim.a}
status=0

files=$(git ls-files '*.c' '*.h' 2>/dev/null || find sim models traces analysis tests bench -name '*.[ch]')
if ! clang-format --dry-run --Werror $files; then
    echo "lint: clang-format differences (run 'make format')" >&2
    status=1
fi

# Banned calls (STYLE.md): unsafe or hidden-state functions.
if grep -nE '(^|[^A-Za-z0-9_])(rand|atoi|atof|sprintf|strcpy|strtok|gsl_rng_env_setup)[[:space:]]*\(' $files; then
    echo "lint: banned call (rand, atoi, atof, sprintf, strcpy, strtok, gsl_rng_env_setup)" >&2
    status=1
fi

# The include graph follows the rooms of docs/architecture.md.
if ! python3 scripts/check_includes.py .; then
    status=1
fi

# No writable global data in library objects: any symbol in a writable data
# section (.data, .bss and friends; .data.rel.ro is read-only after relocation
# and allowed, it holds const tables of function pointers).
writable=$(objdump -t "$lib" | awk '
    /^[0-9a-f]+ / {
        for (i = 2; i <= NF; i++) if ($i ~ /^\./) { sec = $i; break }
        if (sec ~ /^\.(data|bss|tbss|tdata)/ && sec !~ /^\.data\.rel\.ro/ && $NF !~ /^\./)
            print sec, $NF
    }')
if [ -n "$writable" ]; then
    echo "lint: writable global data in $lib:" >&2
    echo "$writable" >&2
    status=1
fi

[ $status -eq 0 ] && echo "lint: ok"
exit $status
