"""A room run in memory with the real prompts, engine, guardrails and rehearsal model (no database).

It follows the runner's order of things: the machine's next step, the prompt the
builder writes for it, the model's answer, the decision read and corrected by the
guardrails, the state advanced. Used to exercise the rehearsal model quickly.
"""
from facilitation.context import AgentView, assemble
from facilitation.deliberation import parse_markers
from facilitation.engine import (
    EngineState, Evaluation, Opening, ParticipantTurn, SeatInfo, Synthesis, after_decision, after_synthesis, after_turn,
    apply_guardrails, decide_from, next_step, read_decision,
)
from facilitation.llm.rehearsal import RehearsalProvider
from facilitation.presets import get_participant, get_preset
from facilitation.prompts.builder import for_step
from facilitation.presets.participants import FUNCTION_ROLES

TOPIC = "Should we put a Redis cache in front of Postgres?"
ROLE_NAMES = {r["key"]: r["name"] for r in FUNCTION_ROLES}


def participant(seat_id: int, alias: str) -> AgentView:
    spec = get_participant(alias)
    if spec is None:
        return AgentView(seat_id=seat_id, agent_id=seat_id, name=alias.title(), alias=alias, persona_prompt=f"You are {alias.title()}.")
    return AgentView(seat_id=seat_id, agent_id=seat_id, name=spec["name"], alias=alias, persona_key=alias,
                     persona_name=spec["name"], persona_prompt=spec["prompt"], persona_style=spec.get("style", ""),
                     role_name=ROLE_NAMES.get(spec["role"], ""), expertise=list(spec["expertise"]))


def facilitator(style: str) -> AgentView:
    preset = get_preset(style)
    if preset is None:
        return AgentView(seat_id=1, agent_id=1, name="Chair", persona_prompt="You are a fair facilitator.")
    return AgentView(seat_id=1, agent_id=1, name=preset["name"], persona_key=style, persona_name=preset["name"],
                     persona_prompt=preset["prompt"])


class SimulatedRoom:
    def __init__(self, style: str, fmt: str = "deliberation", people=(("architect", "participant"), ("security", "participant"),
                 ("pragmatist", "devil_advocate")), max_rounds: int = 6, topic: str = TOPIC, provider=None):
        self.style, self.format, self.topic, self.max_rounds = style, fmt, topic, max_rounds
        self.agents = {11 + n: participant(11 + n, alias) for n, (alias, _) in enumerate(people)}
        self.seats = [SeatInfo(11 + n, self.agents[11 + n].name, role) for n, (_, role) in enumerate(people)]
        self.facilitator = facilitator(style)
        self.state = EngineState(maxRounds=max_rounds)
        self.records: list[dict] = []
        self.decisions: list = []
        self.requests: list = []
        self.conclusion = ""
        self.provider = provider or RehearsalProvider()
        self.seq = 0

    def ctx(self):
        return assemble(room_id=1, name="Cache", topic=self.topic, format=self.format, round=self.state.round,
                        max_rounds=self.max_rounds, state=self.state, seats=self.seats, agents=self.agents,
                        facilitator=self.facilitator, records=self.records)

    def step(self):
        ctx = self.ctx()
        step = next_step(self.state, self.seats)
        request = for_step(ctx, step, 30.0)
        self.requests.append(request)
        text = self.provider.complete(request).text
        self.seq += 1
        if isinstance(step, (Opening, Evaluation)):
            opening = isinstance(step, Opening)
            rounds_left = ctx.max_rounds - ctx.round if opening else step.rounds_left
            ids = [s.id for s in ctx.speakers]
            read = read_decision(text, speaking_ids=ids, opening=opening, rounds_left=rounds_left, names=ctx.speaker_names())
            decision = decide_from(read, speaking_ids=ids, opening=opening, rounds_left=rounds_left, last_id=ctx.last_seat_id)
            decision = apply_guardrails(decision, ctx.guardrail_facts(rounds_left), opening=opening)
            self.decisions.append(decision)
            if decision.decision == "continue":
                self.records.append({"kind": "decision", "seq": self.seq, "round": self.state.round,
                                     "seatId": decision.next_participant_id, "question": decision.question})
            self.state = after_decision(self.state, decision)
        elif isinstance(step, ParticipantTurn):
            seat = ctx.seat(step.seat_id)
            self.state = after_turn(self.state, step.seat_id)
            self.records.append({"kind": "contribution", "seq": self.seq, "round": self.state.round, "seatId": seat.id,
                                 "speaker": seat.name, "content": text, "markers": parse_markers(text), "status": "ok"})
        elif isinstance(step, Synthesis):
            self.conclusion = text
            self.state = after_synthesis(self.state)
        return step

    def run(self, limit: int = 200):
        for _ in range(limit):
            if self.state.phase == "done":
                break
            self.step()
        return self

    @property
    def order(self) -> list[str]:
        return [r["speaker"] for r in self.records if r["kind"] == "contribution"]

    @property
    def turns(self) -> list[dict]:
        return [r for r in self.records if r["kind"] == "contribution"]
