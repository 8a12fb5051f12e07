"""The reference frameworks doing the same turns: LangGraph (SQLite checkpointer) and AutoGen (in memory).

Imported by ``step_cost.py`` and ``storage.py`` only; both libraries are benchmark-only
dependencies (the ``bench`` extra), so every import here is lazy.
"""
import asyncio
import sqlite3
import time
from pathlib import Path

from common import (DECISION_QUESTION, PARTICIPANTS, ROUNDS_PER_ROOM, SYNTHESIS_TEXT, TURN_TEXT, checkpoint_wal, remove_sqlite,
                    sqlite_vacuumed_size)


def langgraph_version() -> str:
    from importlib.metadata import version

    try:
        return f"langgraph {version('langgraph')}, langgraph-checkpoint-sqlite {version('langgraph-checkpoint-sqlite')}"
    except Exception:
        return "langgraph not installed"


def autogen_version() -> str:
    from importlib.metadata import version

    try:
        return f"autogen-agentchat {version('autogen-agentchat')}"
    except Exception:
        return "autogen not installed"


def build_langgraph(checkpointer):
    """A facilitated discussion as a LangGraph graph: facilitator -> participant -> facilitator ... -> synthesis.

    Same shape as the engine: each participant turn is preceded by a facilitator decision
    (a node that picks the next speaker and asks a question), the turn appends the same
    TURN_TEXT, and a synthesis node ends it. The transcript is the ``messages`` channel
    (``add_messages``), as LangGraph chat graphs keep it.
    """
    from typing import Annotated, TypedDict

    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    class State(TypedDict):
        messages: Annotated[list, add_messages]
        turns: int
        max_turns: int
        next_speaker: int
        question: str

    def facilitator(state: State):
        if state["turns"] >= state["max_turns"]:
            return {"question": ""}
        nxt = state["turns"] % PARTICIPANTS
        return {"next_speaker": nxt, "question": DECISION_QUESTION,
                "messages": [AIMessage(content=DECISION_QUESTION, name="facilitator")]}

    def route(state: State):
        return "synthesis" if state["turns"] >= state["max_turns"] else "participant"

    def participant(state: State):
        return {"turns": state["turns"] + 1,
                "messages": [AIMessage(content=TURN_TEXT, name=f"speaker_{state['next_speaker']}")]}

    def synthesis(state: State):
        return {"messages": [AIMessage(content=SYNTHESIS_TEXT, name="facilitator")]}

    g = StateGraph(State)
    g.add_node("facilitator", facilitator)
    g.add_node("participant", participant)
    g.add_node("synthesis", synthesis)
    g.add_edge(START, "facilitator")
    g.add_conditional_edges("facilitator", route, ["participant", "synthesis"])
    g.add_edge("participant", "facilitator")
    g.add_edge("synthesis", END)
    return g.compile(checkpointer=checkpointer)


def _saver(path: Path, synchronous: str):
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    if synchronous:
        conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn, saver


def run_langgraph(path: Path, thread_turns: list[int], synchronous: str = "") -> dict:
    """Run one thread per entry of ``thread_turns`` (its number of participant turns), durability="sync".

    ``synchronous`` "" keeps SQLite's default (FULL: the WAL is fsynced at every commit).
    Returns elapsed seconds, turns, steps (checkpoints written) and bytes added to the file.
    """
    from langchain_core.messages import HumanMessage

    conn, saver = _saver(path, synchronous)
    graph = build_langgraph(saver)
    # Warm up (first-call imports and caches), in a thread of its own that is removed afterwards.
    graph.invoke({"messages": [HumanMessage(content="warm-up")], "turns": 0, "max_turns": 2},
                 {"configurable": {"thread_id": "warm-up"}, "recursion_limit": 100}, durability="sync")
    saver.delete_thread("warm-up")
    conn.commit()
    base = sqlite_vacuumed_size(path)
    checkpoint_wal(conn)  # as for Convene: the run starts with an empty write-ahead log
    started, cpu = time.perf_counter(), time.process_time()
    for i, turns in enumerate(thread_turns):
        graph.invoke({"messages": [HumanMessage(content="Should we cache the product catalogue at the edge?")],
                      "turns": 0, "max_turns": turns},
                     {"configurable": {"thread_id": f"discussion-{i}"}, "recursion_limit": 4 * turns + 20},
                     durability="sync")
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    checkpoints = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    conn.close()
    size = sqlite_vacuumed_size(path)
    remove_sqlite(path)  # one thread of 400 turns is ~170 MB
    return {"seconds": elapsed, "cpu_seconds": cpu, "turns": sum(thread_turns), "checkpoints": checkpoints, "bytes": size - base}


def run_autogen(turns: int) -> dict:
    """RoundRobinGroupChat over PARTICIPANTS assistant agents with ReplayChatCompletionClient (in memory)."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import MaxMessageTermination
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_ext.models.replay import ReplayChatCompletionClient

    def team(n: int):
        per_agent = n // PARTICIPANTS + 1
        agents = [AssistantAgent(f"speaker_{i}", model_client=ReplayChatCompletionClient([TURN_TEXT] * per_agent))
                  for i in range(PARTICIPANTS)]
        # The task message counts as one message: n turns need n + 1.
        return RoundRobinGroupChat(agents, termination_condition=MaxMessageTermination(n + 1))

    async def go(n: int) -> tuple[float, float, int]:
        t = team(n)
        started, cpu = time.perf_counter(), time.process_time()
        result = await t.run(task="Should we cache the product catalogue at the edge?")
        return time.perf_counter() - started, time.process_time() - cpu, len(result.messages) - 1

    asyncio.run(go(6))  # warm-up
    elapsed, cpu, done = asyncio.run(go(turns))
    return {"seconds": elapsed, "cpu_seconds": cpu, "turns": done}


__all__ = ["build_langgraph", "run_langgraph", "run_autogen", "langgraph_version", "autogen_version", "ROUNDS_PER_ROOM"]
