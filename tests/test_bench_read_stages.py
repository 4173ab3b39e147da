"""benchmarks/bench_read.py times each stage by wrapping the functions it names where the
pipeline calls them: every name must still be there, or the per-stage table breaks."""

import importlib
import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_read.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_read", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_stage_the_benchmark_times_names_a_function_the_pipeline_has():
    missing = []
    for stage, targets in _bench().STAGES.items():
        for target in targets:
            module_name, path = target.split(":")
            owner = importlib.import_module(module_name)
            for part in path.split("."):
                owner = getattr(owner, part, None)
            if not callable(owner):
                missing.append(f"{stage}: {target}")
    assert missing == []
