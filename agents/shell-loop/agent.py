"""Shell Loop: the example's shell-loop agent, made real. A loop over an
OpenAI-compatible chat completions API: the model answers with one bash
command in a fenced block, the agent runs it in the working folder and
sends back its output, until the model answers DONE. Standard library
only, so it runs on any environment image's Python.

eval infer runs it with FEATBENCH_INSTRUCTION (the task), FEATBENCH_MODEL,
FEATBENCH_PROXY (the metering proxy, its only way out) and FEATBENCH_WORKDIR
set.
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

SYSTEM = """You are a software engineer working in a terminal, in the folder {workdir}.
Each of your replies holds exactly one bash command in a fenced block:

```bash
the command
```

It runs in {workdir} and you get its output back. Write files with heredocs
(cat > path <<'EOF'). When the task is done, reply with the single word DONE
and no command."""

BLOCK = re.compile(r"```(?:bash|sh)?\n(.*?)```", re.S)


def chat(messages):
    url = os.environ["FEATBENCH_PROXY"].rstrip("/") + "/chat/completions"
    body = json.dumps({"model": os.environ["FEATBENCH_MODEL"], "messages": messages}).encode()
    for attempt in range(3):
        req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as resp:
                return json.load(resp)["choices"][0]["message"].get("content") or ""
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")[:500]
            if e.code == 429 and "featbench_limit" in detail:
                print("shell-loop: stopped by a limit: " + detail, file=sys.stderr)
                sys.exit(3)
            if e.code < 500 and e.code != 429 or attempt == 2:
                print("shell-loop: the model's API failed: %d %s" % (e.code, detail), file=sys.stderr)
                sys.exit(2)
        except (urllib.error.URLError, OSError) as e:
            if attempt == 2:
                print("shell-loop: the model's API cannot be reached: %s" % e, file=sys.stderr)
                sys.exit(2)
        time.sleep(2 ** attempt)


def run(command, workdir):
    try:
        p = subprocess.run(["bash", "-c", command], cwd=workdir, capture_output=True, text=True, timeout=300)
        out = "exit status %d\n%s%s" % (p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired:
        out = "the command timed out after 300 s"
    if len(out) > 10000:
        out = out[:5000] + "\n[... cut ...]\n" + out[-5000:]
    return out


def main():
    workdir = os.environ.get("FEATBENCH_WORKDIR", os.getcwd())
    with open(os.environ["FEATBENCH_INSTRUCTION"], encoding="utf-8") as f:
        task = f.read()
    # The harness's proxy enforces the instance's limits (turns, tokens,
    # cost); this bound only keeps a runaway loop finite without one.
    turns = 1000
    messages = [{"role": "system", "content": SYSTEM.format(workdir=workdir)}, {"role": "user", "content": task}]
    for _ in range(turns):
        reply = chat(messages)
        messages.append({"role": "assistant", "content": reply})
        print(reply, flush=True)
        m = BLOCK.search(reply)
        if m is None:
            if reply.strip().upper().startswith("DONE"):
                return
            messages.append({"role": "user", "content": "Reply with one command in a ```bash block, or DONE."})
            continue
        out = run(m.group(1), workdir)
        print(out, flush=True)
        messages.append({"role": "user", "content": out})
    print("shell-loop: out of turns", file=sys.stderr)


if __name__ == "__main__":
    main()
