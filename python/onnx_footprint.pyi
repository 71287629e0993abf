# Type stubs of the onnx_footprint extension module (python/onnx_footprint_module.cc).
import os
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

__version__: str

class Error(ValueError):
    """Bad input: the CLI's one-line exit-2 message ("PATH: problem", or the flag's)."""

_Path = Union[str, "os.PathLike[str]"]
_Size = Union[int, str]  # bytes, or the flags' SIZE text: "512KiB", "1.5MiB", "100MB"

def analyze(
    model: Union[_Path, bytes, bytearray, memoryview, Any],
    *,
    external_data_dir: Optional[_Path] = ...,
    baseline: Optional[bool] = ...,
    dims: Optional[Mapping[str, int]] = ...,
    input_shapes: Optional[Mapping[str, Sequence[int]]] = ...,
    dim_default: Optional[int] = ...,
    tensor_shapes: Optional[Mapping[str, Sequence[int]]] = ...,
    input_values: Optional[Mapping[str, Union[int, float, bool, str, Sequence[Union[int, float, bool]]]]] = ...,
    sweep: Optional[str] = ...,
    device: Optional[str] = ...,
    device_file: Optional[_Path] = ...,
    schedule: Optional[str] = ...,
    alias: Optional[bool] = ...,
    inplace: Optional[bool] = ...,
    fold: Optional[bool] = ...,
    runtime: Optional[str] = ...,
    time_limit: Optional[float] = ...,
    schedule_time_limit: Optional[float] = ...,
    max_peak: Optional[_Size] = ...,
    max_arena: Optional[_Size] = ...,
    max_weights: Optional[_Size] = ...,
    baseline_report: Optional[_Path] = ...,
) -> dict[str, Any]:
    """The JSON report of `onnx-footprint analyze MODEL --format json`, as a dict."""

def check(
    report: Mapping[str, Any],
    *,
    max_peak: Optional[_Size] = ...,
    max_arena: Optional[_Size] = ...,
    max_weights: Optional[_Size] = ...,
) -> list[str]:
    """The exceeded budgets, one CLI line each ("PATH: peak ... exceeds --max-peak ..."); [] if none."""

def plan(
    buffers: Sequence[Tuple[int, int, int]], *, time_limit: float = ..., alignment: int = ...
) -> dict[str, Any]:
    """Offsets for (size, first, last) buffers live on closed step intervals."""

def devices() -> list[dict[str, Any]]:
    """The built-in hardware profiles, as `onnx-footprint devices --format json`."""

def fit(
    model: Union[_Path, bytes, bytearray, memoryview, Any],
    *,
    external_data_dir: Optional[_Path] = ...,
    fit_dims: Optional[Sequence[str]] = ...,
    device: Optional[str] = ...,
    device_file: Optional[_Path] = ...,
    **options: Any,
) -> dict[str, Any]:
    """The report of `onnx-footprint fit MODEL --format json`: the verdict and each option that would fit."""
