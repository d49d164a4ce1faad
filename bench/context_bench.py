"""Working-memory cost per model call: pins + clearing + trimming, and a compaction.

    .venv/bin/python bench/context_bench.py [--turns 100] [--repeat 30]

Builds a history of N turns (user message, a tool call with a ~300-token result, an answer),
then times ``WorkingMemory.model_input`` (what the middleware does on every call) and a forced
extractive ``compact``; prints medians and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engram.context import ContextPolicy, WorkingMemory
from engram.tokens import count_message_tokens


def history(turns: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("You are a market analyst.")]
    for i in range(turns):
        messages.append(HumanMessage(f"Turn {i}: compare NVDA and AMD margins. Never trade TSLA."))
        call = {"name": "fundamentals", "args": {"ticker": "NVDA", "turn": i}, "id": f"c{i}"}
        messages.append(AIMessage("", tool_calls=[call]))
        body = " ".join(
            f'{{"q": "2026Q{k % 4 + 1}", "margin": {60 + k % 9}.{i % 10}}}' for k in range(30)
        )
        messages.append(ToolMessage(body, tool_call_id=f"c{i}", name="fundamentals"))
        messages.append(AIMessage(f"Turn {i}: NVDA's gross margin stays above AMD's."))
    return messages


def timed(fn: Callable[[], object], repeat: int) -> str:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    runs.sort()
    return (
        f"median {statistics.median(runs):7.2f} ms  p95 {runs[int(0.95 * (len(runs) - 1))]:7.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    messages = history(args.turns)
    state = {"messages": messages}
    memory = WorkingMemory(policy=ContextPolicy(max_input_tokens=8000, compact_at_tokens=6000))
    total = count_message_tokens(messages)
    sent = memory.model_input(state)
    print(
        f"{len(messages)} messages, {total} tokens -> {len(sent)} messages, "
        f"{count_message_tokens(sent)} tokens sent"
    )
    fit = timed(lambda: memory.model_input(state), args.repeat)
    compact = timed(lambda: memory.compact(state, force=True), args.repeat)
    print(f"model_input (pins+clear+trim)  {fit}")
    print(f"compact (extractive, forced)   {compact}")


if __name__ == "__main__":
    main()
