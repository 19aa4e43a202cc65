"""examples/training/train_classifier.py as a user runs it (issue 40): it trains on a tree with a
corrupt image, with num_workers as a DataLoader's, and a run preempted and resumed from its checkpoint
trains on exactly the batches, and ends with exactly the weights, of a run that was not."""

import pathlib
import re
import subprocess
import sys

import pytest

from conftest import run_example

torch = pytest.importorskip("torch")

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "training" / "train_classifier.py"
STEP = re.compile(r"^epoch (\d+) step (\d+): (\d+) images, loss (\S+)$", re.M)


def train(work, *flags):
    # One torch thread: the weights of two runs are then bit for bit comparable.
    return run_example(EXAMPLE, work, *flags, OMP_NUM_THREADS="1")


def test_a_preempted_run_resumes_into_exactly_the_uninterrupted_one(tmp_path):
    work = tmp_path / "work"
    whole = train(work, "--steps", "10", "--checkpoint", str(tmp_path / "whole.pt"))
    steps = STEP.findall(whole.stdout)
    assert [int(s[1]) for s in steps] == list(range(1, 11))
    # 4 classes x 24 images and the damaged one: 97 samples, 6 full batches of 16 an epoch (drop_last);
    # the damaged image, once in every epoch that keeps it, makes its batch one smaller.
    assert [int(s[0]) for s in steps] == [0] * 6 + [1] * 4
    assert all(int(s[2]) in (15, 16) for s in steps)
    for epoch in "01":
        assert sum(16 - int(s[2]) for s in steps if s[0] == epoch) <= 1
    assert any(int(s[2]) == 15 for s in steps)
    assert "skipped sample" in whole.stderr and "Corrupt JPEG data" in whole.stderr

    first = train(work, "--steps", "10", "--checkpoint", str(tmp_path / "resumed.pt"), "--stop-after", "5")
    assert STEP.findall(first.stdout) == steps[:5]
    second = train(work, "--steps", "10", "--checkpoint", str(tmp_path / "resumed.pt"))
    assert second.stdout.startswith(f"resumed from {tmp_path / 'resumed.pt'} at step 5 (epoch 0, batch 5)\n")
    assert STEP.findall(second.stdout) == steps[5:]
    a, b = torch.load(tmp_path / "whole.pt"), torch.load(tmp_path / "resumed.pt")
    assert a["step"] == b["step"] == 10
    assert a["model"].keys() == b["model"].keys()
    for name in a["model"]:
        assert torch.equal(a["model"][name], b["model"][name]), name
    assert not (tmp_path / "resumed.pt.tmp").exists()


def test_num_workers_in_a_dataloader_trains_on_chw_batches(tmp_path):
    r = train(tmp_path / "work", "--steps", "4", "--dataloader", "--num-workers", "2")
    steps = STEP.findall(r.stdout)
    assert [int(s[1]) for s in steps] == [1, 2, 3, 4]
    assert all(int(s[2]) == 16 for s in steps)  # the DataLoader batches samples: the damaged one is never one
    refused = subprocess.run([sys.executable, str(EXAMPLE), "--dataloader", "--checkpoint", str(tmp_path / "c.pt")],
                             capture_output=True, text=True)
    assert refused.returncode == 2
    assert refused.stderr.endswith("error: --checkpoint needs shardpack.Loader: torch's DataLoader has no state_dict "
                                   "to resume exactly from (leave out --dataloader)\n")
