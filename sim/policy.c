/* policy.c — the registry of scheduling policies by CLI name. */
#include "sim/policy.h"

#include <stddef.h>
#include <string.h>

const struct policy_ops *policy_find(const char *name)
{
    static const struct policy_ops *const all[] = {&policy_dedicated};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!strcmp(all[i]->name, name))
            return all[i];
    return NULL;
}
