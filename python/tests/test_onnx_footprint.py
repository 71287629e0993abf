"""The onnx_footprint module against the CLI it is built from.

Run by ctest (python/CMakeLists.txt) with Debian's python3-pytest:
PYTHONPATH points at build/python, FOOTPRINT_CLI at the onnx-footprint binary.
"""
import concurrent.futures
import faulthandler
import glob
import json
import os
import subprocess
import tempfile

import pytest

import onnx_footprint as fp

CLI = os.environ.get("FOOTPRINT_CLI", "build/onnx-footprint")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.environ.get("FOOTPRINT_SHARED_DIR", os.path.join(REPO, "..", "shared"))
TESTDATA = os.environ.get("FOOTPRINT_TESTDATA_DIR", os.path.join(REPO, "testdata"))
MNIST = os.path.join(TESTDATA, "mnist.onnx")
SHARED_MODELS = sorted(glob.glob(os.path.join(SHARED, "models", "**", "*.onnx"), recursive=True))
NO_SHARED_MODELS = (f"needs the shared model corpus, not found at {os.path.join(SHARED, 'models')} "
                    "(tools/fetch_test_models.sh fetches it)")


def shared_model(*parts):
    """A model of the shared corpus; the calling test skips, saying so, when the corpus is absent."""
    if not os.path.isdir(os.path.join(SHARED, "models")):
        pytest.skip(NO_SHARED_MODELS)
    return os.path.join(SHARED, "models", *parts)


# Deterministic planning on both sides: the searches stop at node budgets, not at the clock.
NO_SEARCH = ["--time-limit", "0", "--schedule-time-limit", "0"]
NO_SEARCH_KWARGS = {"time_limit": 0, "schedule_time_limit": 0}
WALL_TIME_KEYS = {"seconds", "timings"}


def masked(value):
    """The report without its wall-time figures, which differ from run to run."""
    if isinstance(value, dict):
        return {k: ("<masked>" if k in WALL_TIME_KEYS else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def run_cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=False)


def cli_report(*args):
    """The CLI's JSON report, or its one-line error (without the program's prefix)."""
    done = run_cli("analyze", *args, "--format", "json")
    if done.returncode == 2:
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("onnx-footprint: ")
        return None, lines[0][len("onnx-footprint: "):]
    return json.loads(done.stdout), None


def cli_usage_error(*args):
    """The CLI's usage error, as Python raises it: without the prefix and the --help pointer."""
    _, error = cli_report(*args)
    assert error is not None
    suffix = " (see `onnx-footprint analyze --help`)"
    return error[: -len(suffix)] if error.endswith(suffix) else error


def test_found_the_shared_models():
    if not os.path.isdir(os.path.join(SHARED, "models")):
        pytest.skip(NO_SHARED_MODELS)
    assert len(SHARED_MODELS) >= 20, SHARED


@pytest.mark.parametrize("path", SHARED_MODELS + [MNIST], ids=os.path.basename)
def test_dict_is_the_cli_json_report(path):
    expected, error = cli_report(path, *NO_SEARCH)
    if error is not None:
        with pytest.raises(fp.Error) as raised:
            fp.analyze(path, **NO_SEARCH_KWARGS)
        assert str(raised.value) == error
        return
    assert masked(fp.analyze(path, **NO_SEARCH_KWARGS)) == masked(expected)


def test_default_options_match_the_cli():
    expected, _ = cli_report(MNIST)
    assert masked(fp.analyze(MNIST)) == masked(expected)
    assert fp.analyze(MNIST)["memory"]["peak_bytes"] == expected["memory"]["peak_bytes"]


def test_each_keyword_is_its_flag():
    model = shared_model("microsoft_onnxconverter-common", "image_classifier32.onnx")
    kwargs = dict(dim_default=2, device="stm32h743", schedule="given", alias=False, inplace=False,
                  max_peak="1MiB", max_arena=4096, max_weights="10MB", **NO_SEARCH_KWARGS)
    flags = ["--dim-default", "2", "--device", "stm32h743", "--schedule", "given", "--no-alias",
             "--no-inplace", "--max-peak", "1MiB", "--max-arena", "4096", "--max-weights", "10MB", *NO_SEARCH]
    expected, _ = cli_report(model, *flags)
    assert masked(fp.analyze(model, **kwargs)) == masked(expected)
    report = fp.analyze(MNIST, dims={}, input_shapes={"Input3": [1, 1, 28, 28]}, baseline=True)
    assert report["options"]["schedule"] == "given"


def test_bindings_and_shapes_match_the_cli():
    model = shared_model("microsoft_onnxruntime-genai", "tiny-random-gpt2-fp32__past.onnx")
    expected, error = cli_report(model, "--dim-default", "3", "--sweep", "batch_size=1,2", *NO_SEARCH)
    assert error is None
    report = fp.analyze(model, dim_default=3, sweep="batch_size=1,2", **NO_SEARCH_KWARGS)
    assert masked(report) == masked(expected)
    assert [point["value"] for point in report["sweep"]["points"]] == [1, 2]
    classifier = shared_model("microsoft_onnxconverter-common", "image_classifier32.onnx")
    expected, error = cli_report(classifier, "--input-shape", "modelInput=2x3x32x32", "--dim", "batch_size=2",
                                 "--inplace", "--alias", *NO_SEARCH)
    assert error is None
    report = fp.analyze(classifier, input_shapes={"modelInput": (2, 3, 32, 32)}, dims={"batch_size": 2},
                        inplace=True, alias=True, **NO_SEARCH_KWARGS)
    assert masked(report) == masked(expected)
    assert report["options"]["input_shapes"] and report["options"]["dims"] == {"batch_size": 2}


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'jobs'"):
        fp.analyze(MNIST, jobs=2)
    with pytest.raises(TypeError):
        fp.analyze(MNIST, dims=[("batch", 1)])
    with pytest.raises(TypeError):
        fp.analyze(MNIST, alias="no")
    with pytest.raises(TypeError):
        fp.analyze(12)


@pytest.mark.parametrize("kwargs, flags", [
    ({"schedule": "fastest"}, ["--schedule", "fastest"]),
    ({"dims": {"batch": -1}}, ["--dim", "batch=-1"]),
    ({"input_shapes": {"Input3": ["a"]}}, ["--input-shape", "Input3=a"]),
    ({"time_limit": -1}, ["--time-limit", "-1"]),
    ({"schedule_time_limit": "soon"}, ["--schedule-time-limit", "soon"]),
    ({"dim_default": -2}, ["--dim-default", "-2"]),
    ({"max_peak": "100Mb"}, ["--max-peak", "100Mb"]),
    ({"sweep": "batch"}, ["--sweep", "batch"]),
])
def test_bad_values_raise_the_cli_usage_message(kwargs, flags):
    with pytest.raises(fp.Error) as raised:
        fp.analyze(MNIST, **kwargs)
    assert str(raised.value) == cli_usage_error(MNIST, *flags)


@pytest.mark.parametrize("kwargs, flags", [
    ({"device": "no-such-device"}, ["--device", "no-such-device"]),
    ({"device_file": "/nonexistent/profile.textproto"}, ["--device-file", "/nonexistent/profile.textproto"]),
    ({"dims": {"no_such_dim": 1}}, ["--dim", "no_such_dim=1"]),
    ({"baseline_report": "/nonexistent/old.json"}, ["--baseline-report", "/nonexistent/old.json"]),
])
def test_bad_input_raises_the_cli_exit_2_message(kwargs, flags):
    with pytest.raises(fp.Error) as raised:
        fp.analyze(MNIST, **kwargs)
    _, error = cli_report(MNIST, *flags)
    assert str(raised.value) == error


def test_bad_model_files_raise_the_cli_message(tmp_path):
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x08\x07\x12\xff\xff\xff")
    for path in [str(broken), str(tmp_path / "missing.onnx"), broken]:
        with pytest.raises(fp.Error) as raised:
            fp.analyze(path)
        _, error = cli_report(str(path))
        assert str(raised.value) == error
        assert isinstance(raised.value, ValueError)


def test_unsized_tensors_are_in_the_dict():
    model = shared_model("microsoft_onnxconverter-common", "image_classifier32.onnx")
    report = fp.analyze(model)
    assert report["memory"]["unsized_tensors"] > 0 or report["memory"].get("symbols")
    tokenizer = shared_model("microsoft_onnxruntime-extensions", "test_bert_tokenizer.onnx")
    report = fp.analyze(tokenizer)
    assert report["memory"]["unsized_tensors"] > 0
    assert report["memory"]["complete"] is False
    assert any(t.get("unsized_reason") for t in report["tensors"])


def test_bytes_and_model_proto_give_the_path_figures():
    onnx = pytest.importorskip("onnx")  # Debian's python3-onnx
    by_path = masked(fp.analyze(MNIST))
    with open(MNIST, "rb") as f:
        data = f.read()
    for model in [data, bytearray(data), memoryview(data), onnx.load(MNIST, load_external_data=False)]:
        report = masked(fp.analyze(model))
        assert report["model"]["path"] == "<in-memory model>"
        report["model"]["path"] = by_path["model"]["path"]
        assert report == by_path


def test_in_memory_model_resolves_external_data_in_external_data_dir():
    onnx = pytest.importorskip("onnx")
    path = shared_model("microsoft_onnxruntime-genai", "tiny-random-LlamaForCausalLM-fp16",
                        "model.onnx")
    by_path = masked(fp.analyze(path, dim_default=1))
    proto = onnx.load(path, load_external_data=False)
    report = masked(fp.analyze(proto, external_data_dir=os.path.dirname(path), dim_default=1))
    report["model"]["path"] = by_path["model"]["path"]
    assert report == by_path
    assert report["memory"]["weights_bytes"] > 0
    with pytest.raises(TypeError):
        fp.analyze(path, external_data_dir="/tmp")


def test_check_returns_the_cli_budget_lines():
    done = run_cli("analyze", MNIST, "--max-peak", "1KiB", "--max-arena", "1MiB", "--max-weights", "2K")
    assert done.returncode == 1
    cli_lines = [line[len("onnx-footprint: "):] for line in done.stderr.strip().splitlines()]
    report = fp.analyze(MNIST)
    assert fp.check(report, max_peak="1KiB", max_arena="1MiB", max_weights="2K") == cli_lines
    assert fp.check(report, max_peak="512KiB") == []
    assert fp.check(report, max_peak=report["memory"]["peak_bytes"]) == []
    assert len(fp.check(report, max_peak=report["memory"]["peak_bytes"] - 1)) == 1
    gated = fp.analyze(MNIST, max_peak="1KiB", max_weights="2K")
    assert fp.check(gated) == [cli_lines[0], cli_lines[1]]
    with pytest.raises(fp.Error) as raised:
        fp.check(report, max_peak="100Mb")
    assert str(raised.value) == cli_usage_error(MNIST, "--max-peak", "100Mb")


def test_plan_places_buffers_like_the_plan_command(tmp_path):
    # The README's problem: half-open [lower, upper) in the CSV, closed [first, last] here.
    csv = tmp_path / "problem.csv"
    csv.write_text("id,lower,upper,size\na,0,2,64\nb,1,3,128\nc,2,4,64\nd,3,5,32\n")
    done = run_cli("plan", str(csv))
    assert done.returncode == 0
    buffers = [(64, 0, 1), (128, 1, 2), (64, 2, 3), (32, 3, 4)]
    plan = fp.plan(buffers, time_limit=1.0)
    assert plan["arena_bytes"] == 192 and plan["lower_bound_bytes"] == 192 and plan["proven_optimal"]
    assert "arena 192 bytes" in done.stderr
    for i, (size_i, first_i, last_i) in enumerate(buffers):
        for j, (size_j, first_j, last_j) in enumerate(buffers[:i]):
            if first_i <= last_j and first_j <= last_i:
                a, b = plan["offsets"][i], plan["offsets"][j]
                assert a + size_i <= b or b + size_j <= a
    assert all(offset % 64 == 0 for offset in fp.plan(buffers, alignment=64)["offsets"])
    with pytest.raises(fp.Error):
        fp.plan([(8, 3, 1)])
    with pytest.raises(fp.Error):
        fp.plan(buffers, time_limit=-1)


def test_devices_is_the_cli_catalog():
    done = run_cli("devices", "--format", "json")
    assert fp.devices() == json.loads(done.stdout)
    assert "stm32h743" in [device["name"] for device in fp.devices()]


def test_help_reads_like_the_cli_help():
    doc = fp.analyze.__doc__
    assert "--dim NAME=VALUE" in doc and "schedule_time_limit" in doc and "--schedule-time-limit" in doc
    assert run_cli("analyze", "--help").stdout.strip() in doc


def test_two_analyses_run_at_once_in_threads(tmp_path):
    """Both analyses are inside the C++ code at the same time.

    Each reads its --device-file from a FIFO, which blocks its analysis (with the GIL
    released) until this thread opens the writing end; only when both are blocked at once
    can this thread open both ends. Were the GIL held, the first analysis would block this
    thread forever: the watchdog turns that into a failure.
    """
    profile = open(os.path.join(REPO, "devices", "stm32h743.textproto")).read()
    fifos = [str(tmp_path / f"device{k}.textproto") for k in range(2)]
    for fifo in fifos:
        os.mkfifo(fifo)
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(fp.analyze, MNIST, device_file=fifo, **NO_SEARCH_KWARGS) for fifo in fifos]
            # Each blocking open returns once that analysis has the FIFO open for reading.
            writers = [os.open(fifo, os.O_WRONLY) for fifo in fifos]
            # Both analyses are now waiting inside fp.analyze, neither can finish yet.
            assert not any(future.done() for future in futures)
            for writer in writers:
                os.write(writer, profile.encode())
                os.close(writer)
            reports = [future.result() for future in futures]
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert [r["device"]["name"] for r in reports] == ["stm32h743", "stm32h743"]
    assert masked(reports[0]) == masked(fp.analyze(MNIST, device="stm32h743", **NO_SEARCH_KWARGS))


def test_a_folder_of_models_in_a_thread_pool_matches_one_by_one():
    models = [shared_model("onnx_onnx", name)
              for name in ["light_squeezenet.onnx", "light_shufflenet.onnx", "light_inception_v1.onnx"]] + [MNIST]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(lambda m: fp.analyze(m, **NO_SEARCH_KWARGS), models))
    assert [masked(r) for r in reports] == [masked(fp.analyze(m, **NO_SEARCH_KWARGS)) for m in models]


def sample_rate_if_model(path):
    """An If on a scalar int input `sr`: 1x1024 floats when sr == 16000, else 1x512."""
    from onnx import TensorProto, helper

    def branch(name, length):
        shape = helper.make_tensor("shape_" + name, TensorProto.INT64, [2], [1, length])
        node = helper.make_node("ConstantOfShape", ["shape_" + name], ["y_" + name])
        out = helper.make_tensor_value_info("y_" + name, TensorProto.FLOAT, None)
        return helper.make_graph([node], name, [], [out], initializer=[shape])

    nodes = [
        helper.make_node("Constant", [], ["rate"], value=helper.make_tensor("r", TensorProto.INT64, [], [16000])),
        helper.make_node("Equal", ["sr", "rate"], ["is_16k"]),
        helper.make_node("If", ["is_16k"], ["y"], then_branch=branch("then", 1024), else_branch=branch("else", 512)),
    ]
    graph = helper.make_graph(nodes, "sr_if", [helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def test_input_values_fold_and_runtime_are_their_flags(tmp_path):
    pytest.importorskip("onnx")
    model = str(tmp_path / "sr_if.onnx")
    sample_rate_if_model(model)
    for value, length in ((16000, 1024), (8000, 512)):
        expected, error = cli_report(model, "--input-value", f"sr={value}", *NO_SEARCH)
        assert error is None
        report = fp.analyze(model, input_values={"sr": value}, **NO_SEARCH_KWARGS)
        assert masked(report) == masked(expected)
        y = [t for t in report["tensors"] if t["name"] == "y"][0]
        assert y["bytes"] == 4 * length and "bound" not in y
    undecided = fp.analyze(model, **NO_SEARCH_KWARGS)
    assert [t for t in undecided["tensors"] if t["name"] == "y"][0]["bound"] == "max_over_branches"
    _, error = cli_report(model, "--input-value", "sr=16000,8000")
    assert error is not None and "sr" in error
    with pytest.raises(fp.Error) as raised:
        fp.analyze(model, input_values={"sr": [16000, 8000]})
    assert str(raised.value) == error
    expected, error = cli_report(MNIST, "--no-fold", "--runtime", "onnxruntime-cpu", *NO_SEARCH)
    assert error is None
    report = fp.analyze(MNIST, fold=False, runtime="onnxruntime-cpu", **NO_SEARCH_KWARGS)
    assert masked(report) == masked(expected)
    assert report["options"]["fold"] is False and report["options"]["runtime"] == "onnxruntime-cpu"
    with pytest.raises(fp.Error, match="--runtime must be one of"):
        fp.analyze(MNIST, runtime="tensorrt")
    expected, error = cli_report(MNIST, "--no-accumulate", *NO_SEARCH)
    assert error is None
    report = fp.analyze(MNIST, accumulate=False, **NO_SEARCH_KWARGS)
    assert masked(report) == masked(expected)
    assert report["options"]["accumulate"] is False and report["modes"]["accumulate"]["enabled"] is False
    assert fp.analyze(MNIST, **NO_SEARCH_KWARGS)["modes"]["accumulate"]["enabled"] is True


def test_fit_is_the_cli_fit_report():
    model = shared_model("microsoft_onnxconverter-common", "image_classifier32.onnx")
    flags = ["--device", "stm32f407", "--fit-dim", "batch_size"]
    done = run_cli("fit", model, *flags, "--format", "json", *NO_SEARCH)
    assert done.returncode in (0, 1), done.stderr
    report = fp.fit(model, device="stm32f407", fit_dims=["batch_size"], **NO_SEARCH_KWARGS)
    assert report == json.loads(done.stdout)
    kinds = [option["kind"] for option in report["options"]]
    assert "dim" in kinds and "dtype" in kinds
    with pytest.raises(fp.Error, match="fit needs --device NAME or --device-file FILE"):
        fp.fit(model)
    with pytest.raises(TypeError, match="fit\\(\\) got an unexpected keyword argument 'devcie'"):
        fp.fit(model, devcie="stm32f407")


def fpn_add_model(path):
    """x [1, 3, height, width] -> Conv s2 -> c2 -> Conv s2 -> Resize x2 -> Add(c2, up): an FPN's top-down add,
    which needs ceil(height / 2) even (the C++ tests' FpnAddModel)."""
    onnx = pytest.importorskip("onnx")  # Debian's python3-onnx
    from onnx import TensorProto, helper
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
    nodes = [helper.make_node("Conv", ["x", "w2"], ["c2"], "conv_c2", **conv),
             helper.make_node("Conv", ["c2", "w4"], ["c4"], "conv_c4", **conv),
             helper.make_node("Resize", ["c4", "", "scales"], ["up"], "upsample", mode="nearest"),
             helper.make_node("Add", ["c2", "up"], ["sum"], "fpn_add"),
             helper.make_node("Relu", ["sum"], ["y"], "relu")]
    weights = [helper.make_tensor("w2", TensorProto.FLOAT, [8, 3, 3, 3], [0.0] * 216),
               helper.make_tensor("w4", TensorProto.FLOAT, [8, 8, 3, 3], [0.0] * 576),
               helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0])]
    graph = helper.make_graph(nodes, "fpn_add",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "height", "width"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_a_binding_the_model_contradicts_raises_the_cli_message(tmp_path):
    model = fpn_add_model(str(tmp_path / "fpn.onnx"))
    with pytest.raises(fp.Error) as raised:
        fp.analyze(model, dims={"height": 481, "width": 640})
    _, error = cli_report(model, "--dim", "height=481", "--dim", "width=640")
    assert str(raised.value) == error
    assert "--dim height=481 makes the model contradict itself: Add 'fpn_add': dims 241 and 242" in error
    assert fp.analyze(model, dims={"height": 480, "width": 640})["memory"]["unsized_tensors"] == 0
    with pytest.raises(fp.Error) as raised:
        fp.fit(model, device="stm32h743", dims={"height": 481, "width": 640})
    assert "--dim height=481 makes the model contradict itself" in str(raised.value)
