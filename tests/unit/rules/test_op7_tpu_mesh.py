"""OP-7.209: a TPU device mesh larger than the devices JAX sees, from the line people pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# marin-community/marin#6230, verbatim: vllm serve --tensor-parallel-size 8 on a v5p-8 worker, whose 4 chips JAX sees
MARIN = (
    "- root stderr: `ValueError: Number of devices 4 must be >= the product of mesh_shape (1, 8)` followed by "
    "`ValueError: cannot reshape array of size 4 into shape (1,8)` in `tpu_inference/utils.py::make_optimized_mesh` "
    "via `tpu_runner.py::_create_2d_mesh`"
)


def test_a_mesh_larger_than_the_chips_proposes_the_tensor_parallel_size_that_fits():
    top = top_finding(MARIN)
    assert top.rule == "OP-7.209" and "asks for 8 devices and JAX sees 4" in top.title
    [change] = top.changes
    assert (change.flag, change.current, change.proposed) == ("--tensor-parallel-size", "8", "4")
    assert "v5p-8 has 4" in top.summary


def test_a_mesh_that_fits_in_other_words_is_not_this_rule():
    top = top_finding("ValueError: cannot reshape array of size 4 into shape (1,8)")
    assert top is None or top.rule != "OP-7.209"


def test_the_other_axes_of_the_mesh_are_left_their_devices():
    top = top_finding("ValueError: Number of devices 4 must be >= the product of mesh_shape (2, 4)")
    assert "at most --tensor-parallel-size 2" in top.title
    assert [(c.current, c.proposed) for c in top.changes] == [("4", "2")]
    none = top_finding("ValueError: Number of devices 0 must be >= the product of mesh_shape (1, 8)")
    assert "no TPU device is visible to JAX" in none.title and none.changes == []
