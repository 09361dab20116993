#!/usr/bin/env python3
"""Check the include graph of tidesim against the allowed directions.

Usage: scripts/check_includes.py [ROOT]   (ROOT defaults to the repository)

The rooms and their arrows are written in docs/architecture.md; this script
is the same rule as code. An include is `#include "a/b.h"` (project headers
are always named from the root). Exit 0 when every include is allowed and
the file graph has no cycle, 1 otherwise (each offence on its own line as
FILE:LINE: message).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room(path):
    """The room a file belongs to, by its folder."""
    parts = path.split('/')
    if parts[0] == 'sim':
        if len(parts) > 2 and parts[1] in ('core', 'policy', 'driver', 'cli'):
            return 'sim/' + parts[1]
        return 'sim'
    return parts[0]


# room -> rooms it may include from (its own room is always allowed).
ALLOWED = {
    'sim/core': set(),
    'models': set(),
    'traces': {'sim/core'},
    'analysis': set(),
    # The world may use the policy interface (sim/policy/policy.h, checked
    # below) and the HDF5 layer of analysis (analysis/h5io.h, below).
    'sim': {'sim/core', 'models', 'traces', 'sim/policy', 'analysis'},
    'sim/policy': {'sim', 'sim/core', 'models', 'traces'},
    'sim/driver': {'sim', 'sim/core', 'models', 'traces', 'analysis', 'sim/policy'},
    'sim/cli': {'sim', 'sim/core', 'models', 'traces', 'analysis', 'sim/policy', 'sim/driver'},
    'tests': None,  # anything
    'bench': None,
    'fuzz': None,
}

# Headers of a room that other rooms may name (None: any header of the room).
PUBLIC = {
    ('sim', 'sim/policy'): {'sim/policy/policy.h'},
    ('sim', 'analysis'): {'analysis/h5io.h'},
    ('sim/driver', 'sim/policy'): {'sim/policy/policy.h'},
    ('sim/cli', 'sim/policy'): {'sim/policy/policy.h'},
}

# Shared homes inside sim/policy/ that every policy may use.
POLICY_SHARED = {'policy', 'common', 'registry'}


def policy_home(path):
    """sim/policy/kueue_admit.c -> 'kueue' (a policy's files share the prefix)."""
    base = os.path.basename(path).rsplit('.', 1)[0]
    return base.split('_', 1)[0]


def check(root):
    problems = []
    graph = {}
    files = []
    for top in ('sim', 'models', 'traces', 'analysis', 'tests', 'bench', 'fuzz'):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(('.c', '.h')):
                    files.append(os.path.relpath(os.path.join(dirpath, n), root))
    for f in sorted(files):
        r = room(f)
        allowed = ALLOWED.get(r)
        graph[f] = []
        with open(os.path.join(root, f), encoding='utf-8', errors='replace') as fh:
            for ln, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                graph[f].append(inc)
                if '/' not in inc and r not in ('tests', 'bench', 'fuzz'):
                    problems.append(f'{f}:{ln}: "{inc}": name project headers from the root')
                    continue
                ir = room(inc)
                if allowed is None or ir not in ALLOWED:
                    continue
                if ir != r and ir not in allowed:
                    problems.append(f'{f}:{ln}: {r}/ may not include {inc} ({ir}/)')
                    continue
                pub = PUBLIC.get((r, ir))
                if ir != r and pub is not None and inc not in pub:
                    problems.append(f'{f}:{ln}: {r}/ may include only {", ".join(sorted(pub))} '
                                    f'of {ir}/, not {inc}')
                    continue
                if r == 'sim/policy' and ir == 'sim/policy':
                    mine, theirs = policy_home(f), policy_home(inc)
                    if theirs not in POLICY_SHARED and theirs != mine:
                        problems.append(f'{f}:{ln}: policy "{mine}" may not include another '
                                        f"policy's internals ({inc})")
    # No cycles in the file graph (a header that includes itself through others).
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cyc = stack[stack.index(nxt):] + [nxt]
                problems.append(f'{node}: include cycle: {" -> ".join(cyc)}')
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for f in sorted(graph):
        if f not in state:
            visit(f, [])
    # Folder-level: sim/*.c and sim/output.c never reach back into the driver or the CLI
    # (covered by ALLOWED); the writer and the run builder must not include each other.
    for a, b in (('sim/sim.c', 'sim/output.h'), ('sim/sim.h', 'sim/output.h')):
        if b in graph.get(a, []):
            problems.append(f'{a}: the run builder may not include the results writer ({b})')
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    problems = check(root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'includes: {len(problems)} forbidden include(s); the rule is in docs/architecture.md',
              file=sys.stderr)
        return 1
    print('includes: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
