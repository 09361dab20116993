/* registry.c — the registry of scheduling policies by CLI name. */
#include "sim/policy/policy.h"

#include <stddef.h>
#include <string.h>

static const struct policy_ops *const all_policies[] = {
    &policy_dedicated, &policy_tidal,     &policy_adaptive, &policy_kueue,
    &policy_kai,       &policy_timeslice, &policy_mps,      &policy_mig_static,
};

const struct policy_ops *policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof(all_policies) / sizeof(all_policies[0]); i++)
        if (!strcmp(all_policies[i]->name, name))
            return all_policies[i];
    return NULL;
}

const char *policy_names_text(void)
{
    return "dedicated, timeslice, mps, mig-static, kueue, tidal, kai, adaptive";
}
