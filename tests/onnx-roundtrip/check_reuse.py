#!/usr/bin/env python3
"""Checks that the round-trip crate reuses the main workspace's compiled Burn.

Compares cargo's unit graphs (`--unit-graph`, a nightly flag that stable cargo accepts with
`__CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly`) of `cargo build -p xtask --features
full` in the main workspace and `cargo build -p onnx-roundtrip` here. A unit is identified by
package, target, mode, features, profile and its dependencies' identities, as cargo's build
hash is. Prints the units of the round trip that the main build lacks and, among them, the
first causes (units whose dependencies are all shared): those are the features to mirror in
Cargo.toml. Exit status 0 when everything is shared, 1 when something is not (the mirror has
drifted), 2 when the check itself could not run (cargo failed, or the unit graph is no
longer available on this toolchain).

Run from the repository root: python3 tests/onnx-roundtrip/check_reuse.py
"""
import json
import os
import subprocess
import sys

ENV = dict(os.environ, __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS="nightly")


# A unit's identity as a small integer, shared by both graphs: its own fields and its
# dependencies' identities. (Nesting the dependencies' tuples instead makes every hash and
# comparison walk the whole dependency tree, expanded: minutes on the xtask graph.)
INTERNED = {}


def unit_graph(args, cwd):
    out = subprocess.run(
        ["cargo", "build", *args, "--unit-graph", "-Z", "unstable-options"],
        cwd=cwd, env=ENV, check=True, capture_output=True, text=True,
    ).stdout
    units = json.loads(out)["units"]
    ids, fields = {}, {}

    def ident(i):
        if i not in ids:
            u = units[i]
            own = (
                u["pkg_id"].split("#")[-1], u["target"]["name"], u["mode"],
                tuple(u["features"]), json.dumps(u["profile"], sort_keys=True),
            )
            key = own + (tuple(sorted(ident(d["index"]) for d in u["dependencies"])),)
            ids[i] = INTERNED.setdefault(key, len(INTERNED))
            fields[ids[i]] = own
        return ids[i]

    for i in range(len(units)):
        ident(i)
    return units, ids, fields


def main():
    _, main_ids, main_fields = unit_graph(["-p", "xtask", "--features", "full"], ".")
    shared = set(main_ids.values())
    units, ids, fields = unit_graph(["-p", "onnx-roundtrip"], "tests/onnx-roundtrip")
    root = [i for i, u in enumerate(units)
            if u["target"]["name"] == "onnx_roundtrip" and "lib" in u["target"]["kind"]]
    seen, stack = set(), [d["index"] for i in root for d in units[i]["dependencies"]
                          if units[d["index"]]["target"]["kind"] != ["custom-build"]]
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack += [d["index"] for d in units[i]["dependencies"]]
    missing = [i for i in seen if ids[i] not in shared]
    print(f"round-trip dependency units: {len(seen)}, not in the main build: {len(missing)}")
    for i in missing:
        if all(ids[d["index"]] in shared for d in units[i]["dependencies"]):
            name, target, _, features = fields[ids[i]][:4]
            others = sorted({main_fields[m][3] for m in shared
                             if main_fields[m][0] == name and main_fields[m][1] == target})
            print(f"  cause: {name} ({target}) features {list(features)}; main has {others}")
    return 1 if missing else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (subprocess.CalledProcessError, OSError, ValueError, KeyError) as e:
        print(f"could not compare the unit graphs: {e}", file=sys.stderr)
        sys.exit(2)
