/* cmd_mig.c — `tidesim mig profiles|validate` (see cli_mig.h). */
#include "sim/cli/cmd_mig.h"

#include <string.h>

#include "models/gpu.h"
#include "models/mig.h"

static void usage(FILE *f)
{
    char names[256];
    gpu_spec_names(names, sizeof names);
    fprintf(f,
            "usage: tidesim mig profiles GPU\n"
            "       tidesim mig validate GPU LAYOUT\n"
            "\n"
            "  profiles  list the GPU's MIG profiles: slices, SMs, memory, maximum\n"
            "            instances, allowed start slices and the default speed factor\n"
            "  validate  check a layout as the driver would; prints the placement found\n"
            "\n"
            "GPU is one of: %s\n"
            "LAYOUT joins profiles with '+': 3g.40gb+2g.20gb+1g.10gb+1g.10gb, 1g.10gb*7 or\n"
            "1g.10gb×7 (repetition), 3g.40gb@4 (pin the start memory slice)\n"
            "\n"
            "exit status: 0 valid, 1 invalid layout, 2 usage error\n",
            names);
}

static const struct gpu_spec *gpu_arg(const char *name, FILE *err)
{
    const struct gpu_spec *gpu = gpu_spec_find(name);
    if (!gpu) {
        char msg[512];
        gpu_spec_unknown_msg(msg, sizeof msg, name);
        fprintf(err, "tidesim mig: %s\n", msg);
    }
    return gpu;
}

static int profiles(const struct gpu_spec *gpu, FILE *out)
{
    struct mig_knobs k;
    size_t n;
    const struct mig_profile *tab = mig_profiles(gpu, &n);
    if (mig_knobs_init(&k, gpu) || !tab)
        return 1;
    fprintf(out, "%s: %d SMs, %d MiB with MIG off; speed = %.3f x SMs/%d (MIG efficiency)\n",
            gpu->name, gpu->sms, gpu->memory_mib, k.efficiency, gpu->sms);
    fprintf(out, "%-12s %4s %8s %7s %4s %10s %4s %-14s %6s\n", "profile", "id", "compute", "memory",
            "SMs", "memory_MiB", "max", "starts", "speed");
    for (size_t i = 0; i < n; i++) {
        const struct mig_profile *p = &tab[i];
        char starts[32], compute[8], memory[8];
        mig_starts_text(p, starts, sizeof starts);
        snprintf(compute, sizeof compute, "%d/%d", p->compute_slices, MIG_COMPUTE_SLICES);
        snprintf(memory, sizeof memory, "%d/%d", p->memory_slices, MIG_MEM_SLOTS);
        fprintf(out, "%-12s %4d %8s %7s %4d %10d %4d %-14s %6.3f\n", p->name, p->gi_id, compute,
                memory, p->sms, p->memory_mib, p->max_instances, starts, mig_knobs_speed(&k, p));
    }
    return 0;
}

static int validate(const struct gpu_spec *gpu, const char *text, FILE *out, FILE *err)
{
    struct mig_layout l;
    char reason[MIG_ERR_LEN];
    if (mig_layout_check(gpu, text, &l, reason, sizeof reason)) {
        fprintf(err, "invalid: %s\n", reason);
        return 1;
    }
    char placed[256];
    mig_layout_format(&l, placed, sizeof placed);
    fprintf(out, "valid: %s\n", l.n ? placed : "(empty)");
    return 0;
}

int cli_mig_run(int argc, char **argv, FILE *out, FILE *err)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(out);
            return 0;
        }
    }
    if (argc >= 2 && strcmp(argv[1], "profiles") == 0 && argc == 3) {
        const struct gpu_spec *gpu = gpu_arg(argv[2], err);
        return gpu ? profiles(gpu, out) : 2;
    }
    if (argc >= 2 && strcmp(argv[1], "validate") == 0 && argc == 4) {
        const struct gpu_spec *gpu = gpu_arg(argv[2], err);
        return gpu ? validate(gpu, argv[3], out, err) : 2;
    }
    if (argc < 2)
        fprintf(err, "tidesim mig: missing subcommand (profiles or validate)\n");
    else if (strcmp(argv[1], "profiles") == 0)
        fprintf(err, "tidesim mig profiles: expected one argument: GPU\n");
    else if (strcmp(argv[1], "validate") == 0)
        fprintf(err, "tidesim mig validate: expected two arguments: GPU LAYOUT\n");
    else
        fprintf(err, "tidesim mig: unknown subcommand '%s' (expected profiles or validate)\n",
                argv[1]);
    usage(err);
    return 2;
}

int cli_mig(int argc, char **argv)
{
    return cli_mig_run(argc, argv, stdout, stderr);
}
