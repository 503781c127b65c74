#!/usr/bin/env python3
"""Fails on an include that goes up a floor (docs/ARCHITECTURE.md, "Layers and floors").

Every quoted include names its layer from the one include root ("core/sim/KvPool.h"). The layers
are app > widgets, backend > core; inside a layer, each folder sits on a floor and may include its
own folder and the folders of lower floors only, so no two folders can ever include each other.
core/ stays Qt-free. Run by CTest as repo.floors; `scripts/check_floors.py [ROOT]` by hand.
"""
import os
import re
import sys

# Which layers each layer may include (besides itself).
LAYERS = {
    "core": [],
    "backend": ["core"],
    "widgets": ["core"],
    "app": ["core", "backend", "widgets"],
}
# Folder floors inside each layer, lowest first; a folder sees only lower floors and itself.
FLOORS = {
    "core": [
        ["model"],                           # ids, errors, prompts, distributions: plain values
        ["io"],                              # files: read checked, written whole (AtomicFile), locks
        ["events", "stats", "trace"],        # the event vocabulary; statistics; trace readers
        ["knobs", "diagnosis", "workload"],  # knob registry; failure detectors; workload generators
        ["router", "metrics"],               # routing policies; run summaries
        ["scenario", "live", "telemetry"],   # scenario files; upstream formats; the telemetry store
        ["sim"],                             # the simulated cluster
        ["run"],                             # runs: simulation, live router, what-if previews
        ["source", "sweep", "calibration"],  # what consumes runs
    ],
    "backend": [["convert", "export"], ["live", "recording", "service"], ["metrics", "source"]],
    "widgets": [["common"], ["charts", "decisions", "diagnosis", "knobs", "runs", "sweep", "timeline"]],
    "app": [["cli", "gui"]],
}
# Test and benchmark code may include any layer; the product never includes them.
TOP = {"tests", "bench", "fuzz"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def floor_of(layer, folder):
    for level, folders in enumerate(FLOORS[layer]):
        if folder in folders:
            return level
    return None


def check(root):
    errors = []
    for layer in list(LAYERS) + sorted(TOP):
        for dirpath, _, names in os.walk(os.path.join(root, layer)):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                parts = path.split("/")
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                for line_no, (kind, target) in ((text.count("\n", 0, m.start()) + 1, m.groups())
                                                for m in INCLUDE.finditer(text)):
                    where = f"{path}:{line_no}: "
                    if kind == "<":
                        if layer == "core" and re.match(r"Q[A-Za-z]*($|/)", target):
                            errors.append(where + f"core/ is Qt-free, but includes <{target}>")
                        continue
                    to = target.split("/")
                    if to[0] not in LAYERS and to[0] not in TOP:
                        if not (target.startswith("kvscope/v1/") or target.endswith(".moc")):
                            errors.append(where + f'"{target}" names no layer (include "core/...", "backend/...", ...)')
                        continue  # generated: kvscope/v1/*.pb.h, a .moc
                    if not os.path.isfile(os.path.join(root, target)):
                        errors.append(where + f'"{target}" is not a file under the include root')
                        continue
                    if layer in TOP:
                        continue
                    if to[0] in TOP:
                        errors.append(where + f'the product includes test code "{target}"')
                    elif to[0] != layer:
                        if to[0] not in LAYERS[layer]:
                            errors.append(where + f'{layer}/ may not include {to[0]}/ ("{target}")')
                    elif len(parts) > 2 and len(to) > 2 and parts[1] != to[1]:
                        mine, theirs = floor_of(layer, parts[1]), floor_of(layer, to[1])
                        if mine is None or theirs is None:
                            unknown = parts[1] if mine is None else to[1]
                            errors.append(where + f"{layer}/{unknown}/ has no floor in scripts/check_floors.py")
                        elif theirs >= mine:
                            errors.append(where + f'{layer}/{parts[1]}/ (floor {mine}) includes "{target}" '
                                          f"(floor {theirs}): a folder includes only lower floors")
    return errors


def self_test():
    """The check itself fails on each kind of wrong include (so repo.floors passing means something)."""
    import tempfile
    cases = {
        "core/router/A.h": ('#include "core/sim/B.h"', "floor 4"),         # up a floor
        "core/stats/A.h": ('#include "core/trace/B.h"', "floor 2"),        # sideways on one floor
        "core/model/A.h": ('#include "backend/live/B.h"', "may not include backend"),
        "widgets/charts/A.h": ('#include "backend/live/B.h"', "may not include backend"),
        "core/events/A.h": ("#include <QString>", "Qt-free"),
        "app/cli/A.h": ('#include "tests/support/B.h"', "test code"),
        "core/newfolder/A.h": ('#include "core/model/B.h"', "no floor"),
        "core/sim/A.h": ('#include "model/B.h"', "names no layer"),
    }
    for path, (line, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for f, text in ((path, line + "\n"), ("core/sim/B.h", ""), ("core/trace/B.h", ""),
                            ("backend/live/B.h", ""), ("tests/support/B.h", ""), ("core/model/B.h", "")):
                os.makedirs(os.path.dirname(os.path.join(root, f)), exist_ok=True)
                with open(os.path.join(root, f), "w", encoding="utf-8") as out:
                    out.write(text)
            errors = check(root)
            if len(errors) != 1 or expected not in errors[0]:
                print(f"self-test: {path} with {line!r} gave {errors}, expected one error with {expected!r}")
                return False
    return True


def main():
    if not self_test():
        return 2
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors = check(os.path.abspath(root))
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} include(s) against the floors (docs/ARCHITECTURE.md)")
        return 1
    print("every include points down a floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
