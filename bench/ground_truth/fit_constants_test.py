"""ctest onnxruntime_constants: the measured constants of the onnxruntime-cpu profile are what
fit_constants.py prints from the committed probe results (constants_probes.results.jsonl).

  python3 fit_constants_test.py SOURCE_DIR

Reads each `constexpr int64_t|double kName = EXPR;` of the files below, evaluates EXPR (numbers,
+ - * /, parentheses) and compares it with the script's `kName = EXPR` line; fails naming every
constant that differs or that one side lacks. Standard library only, no network, no ORT.
"""
import ast
import operator
import os
import re
import subprocess
import sys

SOURCES = ('analyzer/runtimes/onnxruntime/session_bytes.cc', 'analyzer/runtimes/onnxruntime/session_run.cc',
           'analyzer/runtimes/onnxruntime/arena_run.cc')
CONSTEXPR = re.compile(r'constexpr\s+(?:int64_t|double)\s+(k\w+)\s*=\s*([^;]+);')
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(text):
    """An arithmetic expression of C++ literals (digit separators allowed) as a number."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f'not an arithmetic expression: {text!r}')
    return walk(ast.parse(text.replace("'", '').strip(), mode='eval'))


def code_constants(source_dir, names):
    found = {}
    for relative in SOURCES:
        with open(os.path.join(source_dir, relative)) as source:
            for name, expression in CONSTEXPR.findall(source.read()):
                if name in names:
                    found[name] = (relative, expression.strip(), evaluate(expression))
    return found


def script_constants(source_dir):
    script = os.path.join(source_dir, 'bench', 'ground_truth', 'fit_constants.py')
    run = subprocess.run([sys.executable, script], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f'fit_constants.py failed ({run.returncode}):\n{run.stderr}')
    out = run.stdout
    constants = {}
    for line in out.splitlines():
        if line.startswith('#') or not line.strip():
            continue
        name, expression = (part.strip() for part in line.split('=', 1))
        constants[name] = (expression, evaluate(expression))
    return constants


def main():
    source_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    fitted = script_constants(source_dir)
    code = code_constants(source_dir, set(fitted))
    failures = []
    for name, (expression, value) in fitted.items():
        if name not in code:
            failures.append(f'{name}: fit_constants.py prints {expression}, no constexpr of that name in {SOURCES}')
        elif abs(code[name][2] - value) > 1e-9 * max(1.0, abs(value)):
            relative, code_expression, code_value = code[name]
            failures.append(f'{name}: {relative} has {code_expression} ({code_value:g}), '
                            f'fit_constants.py prints {expression} ({value:g})')
    for failure in failures:
        print('MISMATCH ' + failure)
    print(f'{len(fitted) - len(failures)} of {len(fitted)} constants match fit_constants.py')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
