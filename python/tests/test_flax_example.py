"""examples/training/train_flax.py as a JAX user runs it (issue 64): through shardpack's native
loader and through Grain's own pipeline over shardpack.grain.DataSource, a run preempted and resumed
from its Orbax checkpoint (model, optimizer and data iterator) trains on exactly the batches, and
ends with exactly the weights, of a run that was not; and the loss falls."""

import pathlib
import re

import pytest

from conftest import run_example

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "training" / "train_flax.py"
STEP = re.compile(r"^step (\d+): (\d+) images, loss (\S+)$", re.M)
WEIGHTS = re.compile(r"^weights sha256 ([0-9a-f]{64})$", re.M)


def train(work, *flags):
    # XLA's CPU ops on one thread each: the weights of two runs are then bit for bit comparable.
    return run_example(EXAMPLE, work, *flags, XLA_FLAGS="--xla_cpu_multi_thread_eigen=false").stdout


@pytest.mark.parametrize("pipeline", ["native", "grain"])
def test_a_preempted_run_resumes_into_exactly_the_uninterrupted_one(tmp_path, pipeline):
    work = tmp_path / "work"
    # 96 images in batches of 16: 6 steps an epoch, so 10 steps cross into the second epoch.
    whole = train(work, "--pipeline", pipeline, "--steps", "10", "--checkpoint", tmp_path / "whole")
    steps = STEP.findall(whole)
    assert [int(s[0]) for s in steps] == list(range(1, 11)) and all(s[1] == "16" for s in steps)
    assert float(steps[-1][2]) < float(steps[0][2]) / 4  # it learns: the colour gives the class away

    first = train(work, "--pipeline", pipeline, "--steps", "10", "--checkpoint", tmp_path / "resumed",
                  "--stop-after", "4")
    assert STEP.findall(first) == steps[:4]
    second = train(work, "--pipeline", pipeline, "--steps", "10", "--checkpoint", tmp_path / "resumed")
    assert second.startswith(f"resumed from {tmp_path / 'resumed'} at step 4\n")
    assert STEP.findall(second) == steps[4:]
    assert WEIGHTS.findall(second) == WEIGHTS.findall(whole) != []
    assert sorted(p.name for p in (tmp_path / "resumed").iterdir()) == ["10", "8"]  # max_to_keep=2
