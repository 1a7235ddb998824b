#!/usr/bin/env python3
"""The dataset's 7 64-token configurations on the cluster K split's tile (kernels/mixed_input/NOTES.md,
v19): each committed spec (../specs/dec64_*, zipf64_*) with tile 64 x 128 x 256, 3 stages and
cluster 2, named _t64n128_. Run from the repository root; writes specs/ beside this file."""
import glob
import json
import os

SRC = "validation/data/h100/mixed_input/specs"
DST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "specs")

for path in sorted(glob.glob(SRC + "/dec64_*.json") + glob.glob(SRC + "/zipf64_*.json")):
    spec = json.load(open(path))
    spec["name"] = spec["name"].replace("_t64_", "_t64n128_")
    spec["tile"] = {"m": 64, "n": 128, "k": 256}
    spec["stages"] = 3
    spec["cluster"] = 2
    spec["command"] = ("the committed spec " + os.path.basename(path) + " with the cluster K split's tile (64 x 128 x "
                       "256, 3 stages, cluster 2): validation/data/h100/mixed_input/cluster_split_v19/make_specs.py; "
                       "measured by its device_call.sh")
    with open(os.path.join(DST, spec["name"] + ".json"), "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
