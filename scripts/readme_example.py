"""Runs the README's end-to-end example (between its example markers) in a temporary
directory: the shell block with `chatty` as the given binary and the datasets at
$CHATTY_DATASETS (default ../shared/datasets), then the Python block.

usage: python3 scripts/readme_example.py target/release/chatty
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
chatty = os.path.abspath(sys.argv[1])
datasets = os.path.abspath(os.environ.get("CHATTY_DATASETS", os.path.join(root, "..", "shared", "datasets")))
readme = open(os.path.join(root, "README.md")).read()
example = readme.split("<!-- example:start -->")[1].split("<!-- example:end -->")[0]
shell = re.search(r"```sh\n(.*?)```", example, re.S).group(1)
python = re.search(r"```python\n(.*?)```", example, re.S).group(1)
with tempfile.TemporaryDirectory() as work:
    for line in shell.splitlines():
        command = line.split("  #")[0].strip()
        if not command:
            continue
        args = shlex.split(command.replace("../shared/datasets", datasets))
        assert args[0] == "chatty", command
        subprocess.run([chatty, *args[1:], "-q"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-c", python], cwd=work, check=True)
print("README example: ok")
