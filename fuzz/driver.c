/*
 * driver.c — the libFuzzer entry of one target of targets.h, chosen at
 * compile time: `clang -fsanitize=fuzzer,... -DFUZZ_TARGET='"scenario"'`.
 * Built and run by `make fuzz`; docs/security.md says how.
 *
 * A crash, a sanitizer report, a broken promise (FUZZ_BROKEN) or a harness
 * failure all abort, so libFuzzer saves the input as crash-<sha1>.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/targets.h"

#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET='\"name\"' (a name of fuzz/targets.c)"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Before the corpus is loaded: a process forked here is small (fuzz_target_init). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_target_init(FUZZ_TARGET);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct fuzz_target *t = fuzz_target_find(FUZZ_TARGET);
    if (!t) {
        fprintf(stderr, "fuzz: no target '%s'\n", FUZZ_TARGET);
        abort();
    }
    char msg[1024];
    int rc = t->run(data, size, msg, sizeof(msg));
    if (rc == FUZZ_BROKEN || rc < 0) {
        fprintf(stderr, "fuzz %s: %s\n", FUZZ_TARGET, msg);
        abort();
    }
    return 0;
}
