"""Model calls through the SDK providers as the steps make them: a client built for every call
against the process's shared client (``Provider.shared``).

Every step asks ``facilitation.llm.registry.provider_for`` for its provider and makes one call. The
providers for Anthropic and OpenAI-compatible APIs wrap the official SDK clients; building one
loads a TLS context and opens a connection pool. This benchmark makes ``--calls`` calls against the
loopback fakes of the Messages API and of the Chat Completions API (``tests/fakes``: real HTTP on
127.0.0.1, the same process), once with a new provider per call (what every step did before the
providers were shared) and once through ``get_provider`` (what a step does now), and prints the
CPU and wall time per call and the TCP connections the fake accepted. Against a real API each new
connection also costs a TLS handshake over the network, which a loopback fake cannot show.

    python benchmarks/provider_calls.py [--calls 100] [--json PATH]
"""
import sys
import time

import common as C


def _request():
    from facilitation.llm.base import LLMRequest

    return LLMRequest(system="You are the facilitator of a discussion. " * 40, purpose="contribution", timeout=10,
                      messages=[{"role": "user", "content": "Your turn: what would you change?"}])


def measure(server, make, calls: int) -> dict:
    make().complete(_request())  # warm-up: imports, the first connection
    before = server.connections_made
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        make().complete(_request())
    return {"cpu_ms": (time.process_time() - cpu) / calls * 1000, "wall_ms": (time.perf_counter() - wall) / calls * 1000,
            "connections": server.connections_made - before}


def main(argv=None) -> int:
    p = C.parser(__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=100, help="calls per configuration")
    args = p.parse_args(argv)
    calls = 20 if args.quick else args.calls
    tmp = C.temp_dir("provider-calls")
    load_before = C.load_average()
    C.setup_django(C.sqlite_url(tmp / "convene.sqlite3"))
    from django.conf import settings

    from facilitation.llm.anthropic_provider import AnthropicProvider
    from facilitation.llm.openai_provider import OpenAIProvider
    from facilitation.llm.registry import get_provider
    from tests.fakes.anthropic_server import FakeAnthropicServer
    from tests.fakes.openai_server import FakeOpenAIServer

    results, rows = {}, []
    for name, fake, cls, keys in (
        ("anthropic", FakeAnthropicServer, AnthropicProvider, ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")),
        ("openai", FakeOpenAIServer, OpenAIProvider, ("OPENAI_API_KEY", "OPENAI_BASE_URL")),
    ):
        with fake(api_key="bench-key") as server:
            settings.LLM = {**settings.LLM, keys[0]: "bench-key", keys[1]: server.url}
            settings.CONVENE = {**settings.CONVENE, "DEFAULT_MODEL": "bench-model"}
            fresh = measure(server, lambda: cls(api_key="bench-key", base_url=server.url, model="bench-model"), calls)
            shared = measure(server, lambda: get_provider(name), calls)
        results[name] = {"new_client_per_call": fresh, "shared_client": shared}
        for label, r in (("a new client per call", fresh), ("the shared client", shared)):
            rows.append([name, label, r["cpu_ms"], r["wall_ms"], r["connections"]])
    print(C.table(["provider", "each call through", "CPU ms/call", "wall ms/call", f"connections opened in {calls} calls"], rows,
                  title=f"Model calls through the SDK providers, loopback fakes in this process ({C.machine()})"))
    print(f"Before: {load_before}; after: {C.load_average()}")
    C.write_json(args.json, "provider_calls", {"calls": calls, "results": results, "load_before": load_before,
                                               "load_after": C.load_average()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
