"""Sequential runs on ONE thread of one `agentcli serve` process: does a run's latency stay
flat as the thread grows?

    python bench/serve_thread.py [--runs 2000] [--window 50] [--full-history] [--blind-model]

Starts `agentcli serve` on a free loopback port and posts N RunAgentInputs one after
another on the same thread, each a new user message; with --full-history, after the whole
history as the client holds it (what the runs' events and snapshots make of its messages,
as @ag-ui/client applies them: tests.agui_helpers.applied), as AG-UI clients send it.
Reports the median latency of the first and the last `--window` runs and their ratio
(target: at most 1.2x from run 1 to run 2,000). Then `--window` more runs of the thread,
each followed by a run of a new thread, and the ratio of their medians: the same
comparison under the same load (on a shared machine the load drifts over the minutes
between run 1 and run 2,000).

The model is bench/model_process.py, in a process of its own, which times its own part of
each request: from the request read whole (its sending is serve's) to the answer written.
It parses each request as a model server does (with --blind-model, it does not). Each
ratio is given twice: for serve's own part (a run's latency less the model's part of it:
the target's measure, since what a model takes for a longer request is not serve's) and
for the whole latency, the model's part with it.
`BENCH_SERVE_CMD` runs another build (an older one, in its own venv) instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.*

import httpx  # noqa: E402

from tests.agui_helpers import applied, free_port, run_input, sse_events, wait_ready  # noqa: E402

AGENTCLI = str(Path(sys.executable).with_name("agentcli"))
TARGET = 1.2


@contextlib.contextmanager
def model_process(parse: bool) -> Iterator[tuple[str, list[float]]]:
    """bench/model_process.py's base URL while it serves, and a list that holds, once it
    has stopped, its own part of each request (in seconds, in order)."""
    command = [sys.executable, str(ROOT / "bench" / "model_process.py")]
    process = subprocess.Popen(
        [*command, *(["--parse"] if parse else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    took: list[float] = []
    try:
        yield f"http://127.0.0.1:{int(process.stdout.readline())}/v1", took
        process.stdin.close()
        took.extend(json.loads(process.stdout.readline()))
    finally:
        process.kill()
        process.wait()


def one_run(
    client: httpx.Client, url: str, thread: str, n: int, history: list[dict] | None
) -> float:
    """One run's latency; `history`: the client's messages, sent whole and kept up to date
    from the run's events (None: only the new message is sent)."""
    message = {"id": f"u{n}", "role": "user", "content": f"message {n}"}
    sent = [*(history or []), message]
    # Encoded before the clock starts: the client's own JSON encoding of a long history is
    # not the server's latency.
    body = json.dumps(run_input(thread, f"r{n}", sent)).encode()
    headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
    start = time.monotonic()
    response = client.post(url, content=body, headers=headers)
    elapsed = time.monotonic() - start
    response.raise_for_status()
    events = sse_events(response.text)
    if events[-1]["type"] != "RUN_FINISHED":
        raise SystemExit(f"run {n} ended with {events[-1]}")
    if history is not None:
        history[:] = applied(sent, events)
    return elapsed


def ratio_line(label: str, early: float, late: float) -> str:
    ratio = late / early
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    return (
        f"  {label}: {early * 1000:6.2f} -> {late * 1000:6.2f} ms, {ratio:.2f}x "
        f"(target <= {TARGET}x): {verdict}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--window", type=int, default=50, help="runs in each median")
    parser.add_argument("--full-history", action="store_true", help="send every message")
    parser.add_argument("--blind-model", action="store_true", help="a model not parsing it")
    args = parser.parse_args()
    window = min(args.window, max(1, args.runs // 4))
    latencies: list[float] = []
    # After the N runs: `window` more on the long thread, each followed by a run of a new
    # thread (its runs 1 to `window`), so that both are timed under the same load.
    late: list[float] = []
    fresh: list[float] = []
    model = model_process(parse=not args.blind_model)
    with tempfile.TemporaryDirectory() as home, model as (base_url, took):
        env = {
            **os.environ,
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "bench",
            "AGENTCLI_HOME": home,
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}/"
        command = os.environ.get("BENCH_SERVE_CMD", AGENTCLI).split()
        process = subprocess.Popen(
            [*command, "serve", "--port", str(port), "--no-token"],
            env=env,
            cwd=home,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_ready(process, url)
            histories: dict[str, list[dict]] = {"long": [], "fresh": []}

            def run(thread: str, n: int) -> float:
                kept = histories[thread] if args.full_history else None
                return one_run(client, url, f"bench-{thread}", n, kept)

            with httpx.Client(timeout=120) as client:
                latencies = [run("long", n) for n in range(args.runs)]
                for n in range(window):
                    late.append(run("long", args.runs + n))
                    fresh.append(run("fresh", n))
        finally:
            process.terminate()
            process.wait(timeout=10)
            size = sum(p.stat().st_size for p in Path(home).rglob("thread-bench-long.jsonl"))
    # One model request a run, in the order of the runs: the model's own part of each.
    if len(took) != len(latencies) + len(late) + len(fresh):
        raise SystemExit(f"{len(took)} model requests for {len(latencies) + 2 * window} runs")
    runs = len(latencies)
    own = [latency - model for latency, model in zip(latencies, took[:runs], strict=True)]
    own_late = [latency - took[runs + 2 * i] for i, latency in enumerate(late)]
    own_fresh = [latency - took[runs + 2 * i + 1] for i, latency in enumerate(fresh)]
    median = statistics.median
    sends = "the whole history" if args.full_history else "the new message"
    parses = "does not parse it" if args.blind_model else "parses it"
    print(f"{args.runs} sequential runs on one thread ({sends}; the model {parses});")
    print(f"  the session file ends at {size:,} bytes")
    print(f"  median of runs 1-{window} -> median of the last {window}:")
    print(ratio_line("serve's own part", median(own[:window]), median(own[-window:])))
    print(ratio_line("with the model's", median(latencies[:window]), median(latencies[-window:])))
    print(
        f"  then interleaved, under the same load: runs 1-{window} of a new thread -> runs "
        f"{args.runs + 1}-{args.runs + window} of this one:"
    )
    print(ratio_line("serve's own part", median(own_fresh), median(own_late)))
    print(ratio_line("with the model's", median(fresh), median(late)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
