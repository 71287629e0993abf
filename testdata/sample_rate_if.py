#!/usr/bin/python3
"""Writes sample_rate_if.onnx, the README's If example (Values known before running).

The model of SampleRateIfModel (analyzer/testing/value_models.h): sr (int64 scalar) and
x float [1, 512] -> If(sr == 16000, node "pick_rate"): then Concat(x, x) [1, 1024], else
Identity(x) [1, 512] -> y -> Relu -> out. Run with Debian's /usr/bin/python3 (python3-onnx):
  /usr/bin/python3 testdata/sample_rate_if.py testdata/sample_rate_if.onnx
"""

import sys

import onnx
from onnx import TensorProto, helper


def main():
  then_branch = helper.make_graph(
      [helper.make_node("Concat", ["x", "x"], ["doubled"], axis=1)], "then", [],
      [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, [1, None])])
  else_branch = helper.make_graph(
      [helper.make_node("Identity", ["x"], ["same"])], "else", [],
      [helper.make_tensor_value_info("same", TensorProto.FLOAT, [1, None])])
  nodes = [
      helper.make_node("Constant", [], ["rate_16k"], name="rate_16k",
                       value=helper.make_tensor("rate_16k_value", TensorProto.INT64, [], [16000])),
      helper.make_node("Equal", ["sr", "rate_16k"], ["is_16k"], name="is_16k"),
      helper.make_node("If", ["is_16k"], ["y"], name="pick_rate", then_branch=then_branch,
                       else_branch=else_branch),
      helper.make_node("Relu", ["y"], ["out"], name="relu"),
  ]
  graph = helper.make_graph(
      nodes, "sample_rate_if",
      [helper.make_tensor_value_info("sr", TensorProto.INT64, []),
       helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512])],
      [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, None])])
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                            producer_name="testdata/sample_rate_if.py")
  onnx.checker.check_model(model)
  onnx.save(model, sys.argv[1])


if __name__ == "__main__":
  main()
