#!/usr/bin/python3
"""Runs the shell and Python examples of the README and of every other *.md (ctest readme_examples).

Every fenced block of shell (```sh, ```bash, ```console, ```shell, or no language) or Python
(```python, ```py) carries a marker on the last non-blank line before its opening fence:

  <!-- example: run -->       runs against the build (below); what it shows must match
  <!-- example: template -->  commands with placeholders (model.onnx, models/, a CI job's files):
                              only syntax-checked (bash -n, python3 -m py_compile), and every
                              `--flag` after `onnx-footprint COMMAND` must be in that command's --help
  <!-- example: file NAME --> any block (a CSV, a textproto): written to NAME in the document's
                              scratch folder, for the blocks after it to read

A block that is neither shell nor Python (output, a diagram, JSON, C) needs no marker, but must
say what it is: ```text, ```json, ```c, ```yaml... An unmarked shell or Python block, or a
fence without a language and without a marker, fails the test.

How a `run` block runs. Each document has one scratch folder, DOC/work, and runs its blocks in
order there, like a reader going down the page: DOC/work holds symlinks to the checkout's
top-level entries (testdata/, ...) and `build` to the build folder; DOC/shared is the project's
shared folder (FOOTPRINT_SHARED_DIR), so `../shared/models/...` resolves as it does in a checkout.
PATH starts with the build folder (`onnx-footprint`) and a `python3` that is Debian's
/usr/bin/python3 (the one with onnx); PYTHONPATH is the build's python/ folder.

- Shell, as a transcript: a line `$ COMMAND` (continued by lines after a trailing `\`) runs in
  its own `bash -o pipefail`; the lines after it, up to the next `$ `, are its standard output
  followed by its standard error (as a terminal shows them when the program writes its errors
  last). It must exit 0, or N when its command ends with a comment saying `exits N`
  (`$ onnx-footprint diff ...   # exits 1: ...`).
- Shell without `$ ` lines, and Python: the block runs as one script (`bash -e -o pipefail`,
  python3) and must exit 0; its `# -> TEXT` comments, in order, are its whole standard output,
  one line each (`print(len(x))  # -> 3`). Without such comments its output is not checked.
- Shown output matches line by line, trailing blanks ignored, after masking in both: decimal
  seconds (`0.012 s`, JSON timings) and absolute paths. A line that is only `...` (any
  indentation), or `[... anything ...]`, stands for any number of lines.
- Blocks that use the Python module (Python blocks, and shell blocks that name onnx_footprint)
  are skipped, saying so, when the build has no module (no pybind11-dev/python3-dev), and blocks
  that read `../shared/` when the shared model corpus is not there (tools/fetch_test_models.sh).

Beside the blocks, when it checks the whole checkout: every relative Markdown link of every page
leads to a file of the checkout, and README.md links every page of docs/.

Usage: readme_examples.py --source DIR --build DIR --shared DIR [--python-dir DIR]
                          [--python EXE] [FILE.md...]   (default: every *.md of the checkout)
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHELL_LANGS = {"", "sh", "bash", "shell", "console", "shell-session", "zsh"}
PYTHON_LANGS = {"python", "py", "python3"}
COMMAND_TIMEOUT_SECONDS = 120

HOW_TO_MARK = """\
  Put a marker on the line just before its opening fence:
    <!-- example: run -->       run it against the build; shown output ($ lines, # -> comments) must match
    <!-- example: template -->  it has placeholders (model.onnx, a CI job's files): only syntax-checked
    <!-- example: file NAME --> write it to NAME in the scratch folder, for the blocks after it
  or, if it is neither shell nor Python, give the fence its language: ```text, ```json, ```yaml...
  (conventions: the top of tools/readme_examples.py)"""

FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
MARKER_RE = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
EXIT_RE = re.compile(r"#.*\bexits?\s+(\d+)\b")
SHOWN_OUTPUT_RE = re.compile(r"#\s*->\s?(.*)$")


class Block:
  def __init__(self, path, line, lang, marker, marker_error, lines):
    self.path = path            # the document, relative to the checkout
    self.line = line            # 1-based line of the opening fence
    self.lang = lang            # the fence's language, lower case ("" when none)
    self.marker = marker        # "run", "template", "file", or None
    self.file_name = None       # for "file": where to write the block
    self.marker_error = marker_error
    self.lines = lines          # the block's lines, the fence's indentation removed

  def where(self):
    return f"{self.path}:{self.line}"

  def text(self):
    return "".join(line + "\n" for line in self.lines)


def parse_blocks(path, relative):
  """The fenced blocks of one Markdown file, with their markers."""
  blocks = []
  with open(path, encoding="utf-8") as f:
    lines = f.read().split("\n")
  last_non_blank = None
  i = 0
  while i < len(lines):
    match = FENCE_RE.match(lines[i])
    if not match:
      if lines[i].strip():
        last_non_blank = lines[i]
      i += 1
      continue
    indent, fence, lang = match.group(1), match.group(2), match.group(3).lower()
    start = i
    body = []
    i += 1
    closing = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
    while i < len(lines) and not closing.match(lines[i]):
      line = lines[i]
      body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
      i += 1
    i += 1  # the closing fence
    marker, marker_error, file_name = None, None, None
    marker_match = MARKER_RE.match(last_non_blank or "")
    if marker_match:
      words = marker_match.group(1).split()
      if words == ["run"] or words == ["template"]:
        marker = words[0]
      elif len(words) == 2 and words[0] == "file":
        marker, file_name = "file", words[1]
      else:
        marker_error = f"unknown marker `example: {marker_match.group(1)}`"
    block = Block(relative, start + 1, lang, marker, marker_error, body)
    block.file_name = file_name
    blocks.append(block)
    last_non_blank = lines[i - 1] if i - 1 < len(lines) else None
  return blocks


def find_markdown_files(source, build):
  """Every *.md of the checkout, outside hidden folders and build trees."""
  found = []
  for root, dirs, files in os.walk(source):
    dirs[:] = sorted(d for d in dirs
                     if not d.startswith(".") and d != "node_modules"
                     and os.path.realpath(os.path.join(root, d)) != os.path.realpath(build)
                     and not os.path.exists(os.path.join(root, d, "CMakeCache.txt")))
    found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".md")]
  return found


# Masks applied to shown and actual output alike.
SECONDS_RE = re.compile(r"\b\d+\.\d+ ?s\b")
JSON_SECONDS_RE = re.compile(
    r'("(?:seconds|load|onnx_shape_inference|shape_engine_dry_run|shape_engine|schedule_and_plan|'
    r'device_tiers|total)":\s*)-?[0-9.eE+-]+')
ABSOLUTE_PATH_RE = re.compile(r"(?<![\w.)\]}>~/-])/(?:[\w.@+-]+/)*[\w.@+-]+/?")


def mask(line):
  line = JSON_SECONDS_RE.sub(r"\1<seconds>", line)
  line = SECONDS_RE.sub("<seconds> s", line)
  line = ABSOLUTE_PATH_RE.sub("<absolute path>", line)
  return line.rstrip()


def is_ellipsis(line):
  stripped = line.strip()
  return stripped == "..." or (stripped.startswith("[...") and stripped.endswith("...]"))


def trim(lines):
  lines = [mask(line) for line in lines]
  while lines and not lines[-1]:
    lines.pop()
  return lines


def output_matches(shown, actual):
  """Whether the actual lines are the shown ones, `...` lines standing for any lines."""
  # reachable[j]: the shown lines so far can stand for actual[:j] (linear per shown line).
  reachable = [True] + [False] * len(actual)
  for line in shown:
    if is_ellipsis(line):
      first = reachable.index(True) if True in reachable else len(reachable)
      reachable = [j >= first for j in range(len(actual) + 1)]
    else:
      reachable = [False] + [reachable[j] and actual[j] == line for j in range(len(actual))]
  return reachable[-1]


def fill_ellipses(shown, actual):
  """The shown lines with each `...` replaced by the actual lines it stands for, between the
  actual lines its neighbours matched (when they did), so that a diff shows only real differences."""
  literal = [i for i, line in enumerate(shown) if not is_ellipsis(line)]
  matcher = difflib.SequenceMatcher(None, [shown[i] for i in literal], actual, autojunk=False)
  matched = {}  # index in shown -> index in actual
  for block in matcher.get_matching_blocks():
    for k in range(block.size):
      matched[literal[block.a + k]] = block.b + k
  filled = []
  for i, line in enumerate(shown):
    if not is_ellipsis(line):
      filled.append(line)
      continue
    before = matched.get(i - 1, -1) if i > 0 else -1
    after = matched.get(i + 1, len(actual)) if i + 1 < len(shown) else len(actual)
    known = (i == 0 or (i - 1) in matched) and (i + 1 == len(shown) or (i + 1) in matched)
    filled += actual[before + 1:after] if known and before < after else [line]
  return filled


def describe_mismatch(where, what, shown, actual):
  diff = difflib.unified_diff(fill_ellipses(shown, actual), actual, "shown", "actual", lineterm="", n=2)
  return (f"{where}: {what}: the output is not the one shown (- shown, + actual; seconds and "
          f"absolute paths masked, a `...` line stands for any lines):\n" + "\n".join(diff))


class Runner:
  def __init__(self, args):
    self.args = args
    self.failures = []
    self.counts = {"run": 0, "template": 0, "file": 0, "skipped": 0}
    self.scratch = tempfile.mkdtemp(prefix="readme_examples.")
    bin_dir = os.path.join(self.scratch, "bin")
    os.mkdir(bin_dir)
    if args.python:
      os.symlink(args.python, os.path.join(bin_dir, "python3"))
    self.env = dict(os.environ)
    self.env["PATH"] = os.pathsep.join([bin_dir, os.path.abspath(args.build), self.env.get("PATH", "")])
    if args.python_dir:
      self.env["PYTHONPATH"] = os.path.abspath(args.python_dir)
    self.env["PYTHONDONTWRITEBYTECODE"] = "1"
    self.env["LC_ALL"] = "C.UTF-8"
    self.help_text = {}

  def python_module_built(self):
    folder = self.args.python_dir
    return bool(folder) and os.path.isdir(folder) and any(
        name.startswith("onnx_footprint") and name.endswith(".so") for name in os.listdir(folder))

  def fail(self, message):
    self.failures.append(message)
    print("FAIL " + message.split("\n")[0], flush=True)  # in full under Failures at the end

  def make_work_dir(self, document):
    folder = os.path.join(self.scratch, re.sub(r"[^\w.-]", "_", document))
    work = os.path.join(folder, "work")
    os.makedirs(work)
    os.symlink(os.path.abspath(self.args.shared), os.path.join(folder, "shared"))
    source = os.path.abspath(self.args.source)
    build = os.path.realpath(self.args.build)
    for name in sorted(os.listdir(source)):
      full = os.path.join(source, name)
      if name.startswith(".") or os.path.realpath(full) == build or name == "build":
        continue
      if os.path.isdir(full) and os.path.exists(os.path.join(full, "CMakeCache.txt")):
        continue
      os.symlink(full, os.path.join(work, name))
    os.symlink(build, os.path.join(work, "build"))
    return work

  def run(self, argv, cwd, stdin_text=None):
    try:
      done = subprocess.run(argv, cwd=cwd, env=self.env, input=stdin_text, capture_output=True,
                            encoding="utf-8", errors="replace", timeout=COMMAND_TIMEOUT_SECONDS)
      return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
      return None, "", f"timed out after {COMMAND_TIMEOUT_SECONDS} s"

  def check_document(self, path):
    relative = os.path.relpath(path, self.args.source)
    blocks = parse_blocks(path, relative)
    work = None
    for block in blocks:
      is_shell, is_python = block.lang in SHELL_LANGS, block.lang in PYTHON_LANGS
      if block.marker_error:
        self.fail(f"{block.where()}: {block.marker_error}\n{HOW_TO_MARK}")
        continue
      if block.marker is None:
        if is_shell or is_python:
          kind = f"```{block.lang} block" if block.lang else "fenced block without a language"
          self.fail(f"{block.where()}: a {kind} and no example marker.\n{HOW_TO_MARK}")
        continue
      if block.marker in ("run", "template") and not (is_shell or is_python):
        self.fail(f"{block.where()}: `example: {block.marker}` on a ```{block.lang} block: only shell "
                  f"and Python blocks run or get syntax-checked (`example: file NAME` writes any block)")
        continue
      if work is None:
        work = self.make_work_dir(relative)
      started = time.monotonic()
      if block.marker == "file":
        if os.path.isabs(block.file_name) or ".." in block.file_name.split("/"):
          self.fail(f"{block.where()}: `example: file {block.file_name}`: the name must stay in the scratch folder")
          continue
        target = os.path.join(work, block.file_name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
          f.write(block.text())
        self.counts["file"] += 1
        continue
      if block.marker == "template":
        ok = self.check_python_syntax(block, work) if is_python else self.check_shell_template(block, work)
        self.counts["template"] += 1
        if ok:
          print(f"ok   {block.where()} template ({'python' if is_python else 'shell'})", flush=True)
        continue
      if "../shared/" in block.text() and not os.path.isdir(os.path.join(self.args.shared, "models")):
        self.counts["skipped"] += 1
        print(f"SKIP {block.where()}: needs the shared model corpus, not found at "
              f"{os.path.join(self.args.shared, 'models')} (tools/fetch_test_models.sh fetches it)", flush=True)
        continue
      needs_module = is_python or "onnx_footprint" in block.text()
      if needs_module and not self.python_module_built():
        self.counts["skipped"] += 1
        print(f"SKIP {block.where()}: uses the Python module onnx_footprint, which this build does not "
              f"have (it needs pybind11-dev and python3-dev; -DFOOTPRINT_PYTHON=OFF leaves it out)", flush=True)
        continue
      if is_python:
        ok = self.run_script(block, work, [self.args.python or "python3"], ".py")
      elif any(line.startswith("$ ") for line in block.lines):
        ok = self.run_transcript(block, work)
      else:
        ok = self.run_script(block, work, ["bash", "-e", "-o", "pipefail"], ".sh")
      self.counts["run"] += 1
      if ok:
        print(f"ok   {block.where()} run ({time.monotonic() - started:.1f} s)", flush=True)

  # --- run blocks ---------------------------------------------------------------------------

  def parse_transcript(self, block):
    """[(line, command, shown output lines)] of a `$ ` transcript."""
    commands = []
    i = 0
    lines = block.lines
    while i < len(lines) and not lines[i].startswith("$ "):
      if lines[i].strip():
        return None, f"{block.where()}: a transcript starts with its first `$ COMMAND` line, not `{lines[i]}`"
      i += 1
    while i < len(lines):
      line_number = block.line + 1 + i
      command = lines[i][2:]
      while command.endswith("\\") and i + 1 < len(lines):
        i += 1
        command += "\n" + lines[i]
      i += 1
      output = []
      while i < len(lines) and not lines[i].startswith("$ "):
        output.append(lines[i])
        i += 1
      commands.append((line_number, command, output))
    return commands, None

  def run_transcript(self, block, work):
    commands, error = self.parse_transcript(block)
    if error:
      self.fail(error)
      return False
    ok = True
    for line_number, command, shown in commands:
      where = f"{block.path}:{line_number}"
      first_line = command.split("\n")[0]
      exit_match = EXIT_RE.search(command)
      expected_exit = int(exit_match.group(1)) if exit_match else 0
      code, stdout, stderr = self.run(["bash", "-o", "pipefail", "-c", command], work)
      if code != expected_exit:
        self.fail(f"{where}: `{first_line}` exited {code}, not {expected_exit}"
                  + (" (say `# exits N` at the end of a command that should)" if code else "")
                  + f"\n--- stderr:\n{stderr.rstrip()}\n--- stdout:\n{stdout.rstrip()}")
        ok = False
        continue
      shown_lines, actual_lines = trim(shown), trim((stdout + ("\n" if stdout and not stdout.endswith("\n") else "") + stderr).split("\n"))
      if not output_matches(shown_lines, actual_lines):
        self.fail(describe_mismatch(where, f"`{first_line}`", shown_lines, actual_lines))
        ok = False
    return ok

  def run_script(self, block, work, interpreter, suffix):
    script = os.path.join(work, f"example_line_{block.line}{suffix}")
    with open(script, "w", encoding="utf-8") as f:
      f.write(block.text())
    code, stdout, stderr = self.run(interpreter + [script], work)
    if code != 0:
      self.fail(f"{block.where()}: the block exited {code}\n--- stderr:\n{stderr.rstrip()}\n"
                f"--- stdout:\n{stdout.rstrip()}")
      return False
    shown = [m.group(1) for m in (SHOWN_OUTPUT_RE.search(line) for line in block.lines) if m]
    if not shown:
      return True
    shown_lines, actual_lines = trim(shown), trim(stdout.split("\n"))
    if not output_matches(shown_lines, actual_lines):
      self.fail(describe_mismatch(block.where(), "the block's `# ->` lines", shown_lines, actual_lines))
      return False
    return True

  # --- template blocks ----------------------------------------------------------------------

  def check_python_syntax(self, block, work):
    script = os.path.join(work, f"template_line_{block.line}.py")
    with open(script, "w", encoding="utf-8") as f:
      f.write(block.text())
    code, stdout, stderr = self.run([self.args.python or "python3", "-m", "py_compile", script], work)
    if code != 0:
      self.fail(f"{block.where()}: not valid Python:\n{(stderr or stdout).rstrip()}")
      return False
    return True

  def check_shell_template(self, block, work):
    if any(line.startswith("$ ") for line in block.lines):
      commands, error = self.parse_transcript(block)
      if error:
        self.fail(error)
        return False
      script = "".join(command + "\n" for _, command, _ in commands)
    else:
      script = block.text()
    code, stdout, stderr = self.run(["bash", "-n"], work, stdin_text=script)
    if code != 0:
      self.fail(f"{block.where()}: not valid shell (bash -n):\n{stderr.rstrip()}")
      return False
    return self.check_flags(block, script, work)

  def check_flags(self, block, script, work):
    """Every --flag after `onnx-footprint COMMAND` is one that COMMAND's --help names."""
    ok = True
    joined = re.sub(r"\\\n", " ", script)
    for statement in re.split(r"[\n;|&]", joined):
      statement = statement.split(" #")[0]
      match = re.search(r"(?:^|[\s/])onnx-footprint\s+([a-z]+)\b(.*)", statement)
      if not match:
        continue
      command, rest = match.group(1), match.group(2)
      if command not in self.help_text:
        code, stdout, stderr = self.run(["onnx-footprint", command, "--help"], work)
        self.help_text[command] = (stdout + stderr) if code == 0 else None
      help_text = self.help_text[command]
      if help_text is None:
        self.fail(f"{block.where()}: `onnx-footprint {command}`: no such command (its --help fails)")
        ok = False
        continue
      for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
        if not re.search(re.escape(flag) + r"(?![\w-])", help_text):
          self.fail(f"{block.where()}: `onnx-footprint {command} {flag}`: {flag} is not in "
                    f"`onnx-footprint {command} --help`")
          ok = False
    return ok


LINK_RE = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def check_links(source, files, runner):
  """Every relative link of every page resolves inside the checkout, and the README links every
  page of docs/ (its index is how a reader finds them)."""
  source = os.path.realpath(source)
  for path in files:
    with open(path, encoding="utf-8") as f:
      text = f.read()
    relative = os.path.relpath(path, source)
    for target in LINK_RE.findall(text):
      if re.match(r"^[a-z]+:", target):
        continue  # https:, mailto:
      resolved = os.path.realpath(os.path.join(os.path.dirname(path), target))
      if not resolved.startswith(source + os.sep) or not os.path.exists(resolved):
        runner.fail(f"{relative}: the link `{target}` does not lead to a file of the checkout")
  readme = os.path.join(source, "README.md")
  docs = os.path.join(source, "docs")
  if os.path.exists(readme) and os.path.isdir(docs):
    with open(readme, encoding="utf-8") as f:
      linked = {os.path.normpath(t) for t in LINK_RE.findall(f.read())}
    for name in sorted(os.listdir(docs)):
      if name.endswith(".md") and os.path.join("docs", name) not in linked:
        runner.fail(f"README.md: docs/{name} is not linked from the README's index")


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--source", required=True, help="the checkout")
  parser.add_argument("--build", required=True, help="the build folder (onnx-footprint in it)")
  parser.add_argument("--shared", required=True, help="the project's shared folder (FOOTPRINT_SHARED_DIR)")
  parser.add_argument("--python-dir", default="", help="the folder of the onnx_footprint module, if built")
  parser.add_argument("--python", default="/usr/bin/python3", help="the python3 the examples run with")
  parser.add_argument("--keep", action="store_true", help="keep the scratch folder (to look at it)")
  parser.add_argument("files", nargs="*", help="Markdown files (default: every *.md of the checkout)")
  args = parser.parse_args()
  sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")  # reports print × and ✅
  if args.python and not os.path.exists(args.python):
    args.python = ""
  files = args.files or find_markdown_files(args.source, args.build)
  runner = Runner(args)
  try:
    for path in files:
      runner.check_document(path)
    if not args.files:
      check_links(args.source, files, runner)
  finally:
    if args.keep:
      print(f"scratch folder kept: {runner.scratch}")
    else:
      shutil.rmtree(runner.scratch, ignore_errors=True)
  counts = runner.counts
  print(f"{len(files)} documents: {counts['run']} blocks run, {counts['template']} syntax-checked, "
        f"{counts['file']} written as files, {counts['skipped']} skipped; {len(runner.failures)} failures")
  if runner.failures:
    print("\nFailures:\n\n" + "\n\n".join(runner.failures))
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
