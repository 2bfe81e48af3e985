"""benchmarks/predict_accuracy.py --model: a checkpoint other than the embedded SmolLM2 (the GPU runs)."""

from __future__ import annotations

import pytest

from benchmarks import predict_accuracy


def test_model_needs_the_bundled_engine(tmp_path, capsys):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(SystemExit) as stop:
        predict_accuracy.main(["--engine", "both", "--model", str(tmp_path), "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert "--model: only with --engine bundled" in capsys.readouterr().err


def test_model_must_be_a_checkpoint_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        predict_accuracy.main(["--engine", "bundled", "--model", str(tmp_path), "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert f"--model {tmp_path}: no config.json there" in capsys.readouterr().err


def test_every_server_serves_the_model(tmp_path, monkeypatch):
    """Calibrations and targets alike: the targets inherit it through the calibration's command."""
    started, probed = [], []

    def fake_measure(engine, command, workload, levels, step_s, folder, prefill_probe=None):
        started.append(command)
        probed.append(prefill_probe)
        return {"ramp": {}, "command": command, "kv_tokens": None, "folder": folder.name, "probe_gflops": 0.0}

    monkeypatch.setattr(predict_accuracy, "measure", fake_measure)
    monkeypatch.setattr(predict_accuracy, "measured_ramp", lambda document, source: document)  # the fake ramps are {}
    monkeypatch.setattr(predict_accuracy, "what_if", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("stop")))
    with pytest.raises(RuntimeError, match="stop"):
        predict_accuracy.run_engine("bundled", tmp_path, [1.0], 1.0, model="/ckpt/smollm2-shape", prefill_probe=[64])
    assert len(started) == len(predict_accuracy.CALIBRATION) + len(predict_accuracy.TARGETS)
    calibrations = len(predict_accuracy.CALIBRATION)
    assert probed[:calibrations] == [[64]] * calibrations and not any(probed[calibrations:])  # calibrations only
    assert all(command.model == "/ckpt/smollm2-shape" for command in started)
    assert "--max-num-seqs 1" in started[len(predict_accuracy.CALIBRATION)].render()
