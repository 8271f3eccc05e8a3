"""A compactor for any message list: the plugin's summaries without an agentcore session.

:class:`Compactor` takes the messages an app already has (agentcore
messages, OpenAI Chat Completions dicts, Anthropic Messages dicts, LangChain
messages) and a :class:`~agentcore_autosummary.CompactorState`, and returns
the messages to send (the summary, the pinned messages, the verbatim tail)
with the new state. Each call runs the plugin's own checkpoint and window
guard (:func:`~agentcore_autosummary.plugin.post_turn_end`, then
:func:`~agentcore_autosummary.applying.fitting.fit_request`) on a short-lived
session in memory that holds the conversation, so the planner, the budget
rule, the degraded request and the summarizer are the plugin's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import attrs
from attrs import frozen

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    ContextWindowExceededError,
    CostTracker,
    FocusedConfig,
    InMemoryStore,
    LlmProvider,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolSpec,
    TurnContext,
    Usage,
)
from agentcore.plugin_api import HookedProvider, TokenCounter, pin_group, run_sync
from agentcore_autosummary import plugin as _plugin
from agentcore_autosummary.adapters.summarizers import summary_provider
from agentcore_autosummary.applying.fitting import fit_request
from agentcore_autosummary.compactor.compactor_input import (
    check_covered,
    check_pins,
    check_reserve,
    check_state,
    check_text,
    in_flight_start,
    leading_systems,
)
from agentcore_autosummary.compactor.compactor_state import CompactorState, digest
from agentcore_autosummary.compactor.message_formats import (
    MessageFormat,
    detect_format,
    read_messages,
    write_messages,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import turn_budget
from agentcore_autosummary.keeping.runtime import runtime_of, session_correction
from agentcore_autosummary.log_names import LOG_NAME


@frozen
class Compaction:
    """What one :meth:`Compactor.compact` call gives back.

    :param messages: The messages to send, in the format they came in (for
        Anthropic, its turns; the system prompt is in ``system``).
    :param system: Anthropic's ``system`` to send with ``messages``: the
        ``system_prompt`` given and any system message the compaction added
        (a degraded request's note, a summary sent as a system message). None
        for the other formats, whose system messages stay in ``messages``.
    :param state: The new state: pass it to the next call on this conversation.
    :param sent: The same messages as agentcore messages.
    :param sources: For each of ``sent``, the index of the input message it is
        (system messages at the start counted), or None for a message the
        compaction made (the summary, its acknowledgement, a note, a cut tool result).
    :param tokens: The request's size by the plugin's budget rule: its corrected
        count, plus the tool definitions and the reply reservation.
    :param window: The window the request was fitted into (``max_context_tokens``).
    :param left_out: Messages neither covered by the summary nor sent: non-zero only
        for a degraded request (no summary could make room; see docs/autosummary.md).
    :param usage: What the summary calls of this call cost (zero without a summary).
    :param summarized: Whether this call applied a new summary.
    """

    messages: list[Any]
    system: Any
    state: CompactorState
    sent: list[Message]
    sources: tuple[int | None, ...]
    tokens: int
    window: int
    left_out: int
    usage: Usage
    summarized: bool


class Compactor:
    """Fits a message list into the window with the autosummary plugin's summaries.

    :param provider: What summary calls go to: an agentcore
        :class:`~agentcore.LlmProvider`, or the app's own model as
        :func:`~agentcore_autosummary.adapters.summarizers.summary_provider`
        takes it (an OpenAI client, with ``model``; an OpenAI Agents SDK model;
        a LangChain chat model; a callable from Chat Completions dicts to
        text). ``config.summary_provider``, when set, takes precedence as in
        the plugin.
    :param config: The :class:`SummaryConfig`, as for the plugin: its
        ``max_context_tokens`` is the window every returned request fits.
        ``mode`` is always ``"inline"`` here: a call returns once its summary is made.
    :param model: The model the requests go to: its tokenizer counts them
        (default: the provider's model), and summary calls ask for it.
    :param max_tokens: The reply the app's request asks for (default: the share of
        the window agentcore reserves).
    :param tools: The tool definitions the app's requests carry; they count.
    :param token_counter: A counter to use instead of the model's.
    :param plugins: Other agentcore plugins to register (their summary hooks fire).

    :raises ConfigError: an invalid setting; the message names it.
    """

    def __init__(
        self,
        provider: LlmProvider | object,
        config: SummaryConfig | dict[str, Any] | None = None,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        tools: Sequence[ToolSpec] = (),
        token_counter: TokenCounter | None = None,
        plugins: Sequence[object] = (),
    ) -> None:
        summary_config = SummaryConfig.coerce(SummaryConfig() if config is None else config)
        self.config: SummaryConfig = attrs.evolve(summary_config, mode="inline")
        """The summary settings (``mode`` inline)."""
        tools = tuple(tools)
        for index, tool in enumerate(tools):
            if not isinstance(tool, ToolSpec):
                raise ConfigError(f"tools[{index}] must be a ToolSpec, got {tool!r}")
        self.tools: tuple[ToolSpec, ...] = tools
        """The tool definitions counted in every request."""
        self._agent = Agent(
            "compactor", model=model, max_tokens=max_tokens, token_counter=token_counter
        )
        summarizer = summary_provider(provider, model=model)
        builder = AgentBuilder().provider(summarizer).store(InMemoryStore()).load_plugins(False)
        for extra in (_plugin, *plugins):
            builder = builder.plugin(extra)
        if tools:
            builder = builder.tool_registry(_registry(tools))
        self._bundle = builder.setting("summary_config", self.config).build()

    async def compact(
        self,
        messages: Sequence[Any],
        state: CompactorState | None = None,
        *,
        format: str = "auto",
        system_prompt: str | None = None,
        reserve_tokens: int = 0,
        pinned: Sequence[int] = (),
        usage: Usage | None = None,
    ) -> Compaction:
        """The messages to send now, inside the window, and the new state.

        ``messages`` is the whole conversation so far, oldest first, as the app
        keeps it (system messages may lead it; the newest user message and the
        tool calls and results after it are the turn in flight, sent whole).
        When it is over the plugin's watermark, or would not fit the window, the
        oldest messages the state's summary does not cover are summarized (the
        summary calls go to the provider), keeping the recent tail verbatim;
        when no summary can make room, the request leaves out the oldest
        messages instead and says so in a note (``left_out``), as the plugin
        does. ``state``: the state the previous call returned (None: a new
        conversation).

        ``system_prompt``: a system prompt the app sends apart from ``messages``
        (counted, not returned, except in Anthropic's ``system``).
        ``reserve_tokens``: room to keep for what the app adds after ``messages``
        (a next input not in the list yet, the tool calls of a run).
        ``pinned``: indices of ``messages`` always sent verbatim.
        ``usage``: the usage the provider reported for the request the previous
        call returned, when it reported one: the compactor learns from it how the
        server counts (the plugin's token correction) and measures the context by
        it, as the plugin does after a turn.

        :raises ConfigError: messages the converters refuse, a state that does not
            belong to these messages, bad arguments; the message names the problem.
        :raises ContextWindowExceededError: the turn in flight cannot fit the window
            even with every earlier message left out.
        """
        fmt = detect_format(messages, format)
        state = check_state(state)
        system_prompt = check_text("system_prompt", system_prompt)
        reserve_tokens = check_reserve(reserve_tokens)
        if usage is not None and not isinstance(usage, Usage):
            raise ConfigError(f"usage must be an agentcore Usage or None, got {usage!r:.100}")
        converted = read_messages(messages, fmt)
        lead = leading_systems(converted)
        history = converted[lead:]
        pins = check_pins(pinned, len(converted), lead)
        pins = tuple(sorted({i for pin in pins for i in pin_group(history, pin)}))
        check_covered(state, history)
        flight = max(in_flight_start(history), state.covered)
        systems = [message.text for message in converted[:lead]]
        if system_prompt:
            systems.insert(0, system_prompt)
        agent = attrs.evolve(
            self._agent,
            system_prompt="\n\n".join(systems),
            max_tokens=self._reservation() + reserve_tokens,
        )
        mode = FocusedConfig(
            summary_override=state.summary, summary_covers=state.covered, pinned=pins
        )
        session = AgentSession(agent, f"compaction-{uuid.uuid4().hex}", self._bundle, mode)
        # The log lines speak of the caller's list, never of this stand-in session.
        session.stash[LOG_NAME] = f"the message list of {_messages(len(messages))}"
        try:
            if state.data:
                await session.record_usage(None, "summary", data=state.data)
            await session.import_history(self._imported(history[:flight], state.covered, pins))
            in_flight = history[flight:] or [Message.user("")]
            ctx = await self._context(session, state, in_flight)
            if usage is not None:  # the checkpoint learns from it, as after a turn
                ctx.response = LlmResponse(Message.assistant(""), usage)
                if state.sent_tokens is not None:
                    runtime_of(session).sent[ctx.slot.id] = state.sent_tokens
            await _plugin.post_turn_end(ctx)
            ctx.response = None
            try:
                await fit_request(ctx)
            except ContextWindowExceededError as exc:
                raise _too_large(exc, len(messages)) from exc
            result = await self._result(
                session, ctx, fmt, converted, lead, state, flight, system_prompt
            )
        finally:
            await session.aclose()
            await self._bundle.store.delete_session(session.session_id)
        return result

    def compact_sync(
        self,
        messages: Sequence[Any],
        state: CompactorState | None = None,
        *,
        format: str = "auto",
        system_prompt: str | None = None,
        reserve_tokens: int = 0,
        pinned: Sequence[int] = (),
        usage: Usage | None = None,
    ) -> Compaction:
        """:meth:`compact` from plain (non-async) code, on agentcore's private loop.

        Refused with :class:`~agentcore.SessionError` where an event loop runs
        (use ``await compactor.compact(...)`` there); see :func:`agentcore.sync.run_sync`.
        """
        return run_sync(
            self.compact(
                messages,
                state,
                format=format,
                system_prompt=system_prompt,
                reserve_tokens=reserve_tokens,
                pinned=pinned,
                usage=usage,
            )
        )

    def _imported(
        self, history: list[Message], covered: int, pins: tuple[int, ...]
    ) -> list[Message]:
        """``history`` with stand-ins for the messages the summary covers, never read again.

        The segments and incremental strategies read only what the summary does
        not cover (and the pins), so the covered messages are imported as empty stand-ins
        and never counted: a call costs what the uncovered part holds. The
        ``"full"`` strategy re-reads the whole history, and a tail that begins
        with a tool result needs its call: both import the history as it is.
        """
        if (
            self.config.strategy == "full"
            or not covered
            or history[covered:][:1] == []
            or (history[covered].role == "tool")
        ):
            return history
        kept = set(pins)
        return [
            message if index >= covered or index in kept else _STAND_IN
            for index, message in enumerate(history)
        ]

    def _reservation(self) -> int:
        from agentcore.plugin_api import reply_reservation

        return reply_reservation(self._agent.max_tokens, self.config.window)

    async def _context(
        self, session: AgentSession, state: CompactorState, in_flight: list[Message]
    ) -> TurnContext:
        bundle = self._bundle
        ctx = TurnContext(
            session=session,
            session_id=session.session_id,
            turn_index=state.calls,
            slot=await session.get_slot(),
            messages=list(in_flight),
            cost=CostTracker(),
            provider=bundle.provider,
            store=bundle.store,
            memory=session.memory,
            config=bundle.config,
            tools=bundle.tools,  # the app's tool definitions: they count in every request
        )
        ctx.provider = HookedProvider(bundle.provider, bundle.plugin_manager, ctx)
        return ctx

    async def _result(
        self,
        session: AgentSession,
        ctx: TurnContext,
        fmt: MessageFormat,
        converted: list[Message],
        lead: int,
        state: CompactorState,
        flight: int,
        system_prompt: str | None,
    ) -> Compaction:
        slot = await session.get_slot()
        context = ctx.slot.load_messages() if ctx.context is None else ctx.context
        in_flight = [] if flight == len(converted) - lead else list(ctx.messages)
        sent = [*context, *in_flight]
        sent = _with_own_systems(sent, converted[:lead], session.agent.system_prompt)
        sources = _sources(sent, converted)
        focused = slot.config.focused
        assert focused is not None
        history = converted[lead:]
        data = {
            key: await session.get_session_data(key)
            for key in await self._bundle.store.data_keys(session.session_id)
            if key != self.config.memory_key
        }
        budget = turn_budget(ctx, self.config, await session_correction(ctx, runtime_of(session)))
        tokens = await budget.turn_size(ctx)
        new_state = CompactorState(
            summary=focused.summary_override,
            covered=focused.summary_covers,
            covered_digest=digest(history[: focused.summary_covers]),
            calls=state.calls + 1,
            sent_tokens=await budget.turn_local(ctx),
            data=data,
        )
        sent_raw = {index - lead for index in sources if index is not None and index >= lead}
        left_out = sum(
            1 for index in range(focused.summary_covers, len(history)) if index not in sent_raw
        )
        system, written = write_messages(sent, fmt)
        if fmt == "anthropic" and system_prompt:
            system = _anthropic_system(system_prompt, system)
        return Compaction(
            messages=written,
            system=system,
            state=new_state,
            sent=sent,
            sources=sources,
            tokens=tokens,
            window=budget.window,
            left_out=left_out,
            usage=session.cost.total("summary"),
            summarized=new_state.covered != state.covered or new_state.summary != state.summary,
        )


_STAND_IN = Message.user("")
"""What a covered message is imported as (see :meth:`Compactor._imported`)."""


def _messages(count: int) -> str:
    return f"{count} message{'' if count == 1 else 's'}"


def _too_large(exc: ContextWindowExceededError, count: int) -> ContextWindowExceededError:
    """The plugin's refusal of a request, told of the caller's list rather than a turn."""
    return ContextWindowExceededError(
        f"the message list of {_messages(count)} cannot fit the window "
        f"(max_context_tokens {exc.limit_tokens}): its turn in flight (the newest user message "
        f"and the tool calls and results after it), the system prompt and the pinned messages "
        f"need about {exc.requested_tokens} tokens with the reply reserved, even with every "
        "earlier message left out; the state given still holds",
        prompt_tokens=exc.prompt_tokens,
        limit_tokens=exc.limit_tokens,
        requested_tokens=exc.requested_tokens,
    )


def _registry(tools: Sequence[ToolSpec]) -> ToolRegistry:
    """A registry holding ``tools``, for counting only: its functions are never called."""
    registry = ToolRegistry()
    for spec in tools:
        registry.register(
            _not_called, name=spec.name, description=spec.description, parameters=spec.parameters
        )
    return registry


def _not_called(**arguments: Any) -> str:  # pragma: no cover - the compactor runs no tool
    raise AssertionError("a compactor runs no tool")


def _with_own_systems(
    sent: list[Message], own: Sequence[Message], system_prompt: str
) -> list[Message]:
    """``sent`` with the session's joined system prompt put back as the app's own messages.

    The short-lived session sends its system prompt (``system_prompt`` and the
    leading system messages, joined) as one system message; the app gets its
    leading system messages back as they were, and never the ``system_prompt``
    it sends itself.
    """
    rest = sent[1:] if sent and sent[0].role == "system" and sent[0].text == system_prompt else sent
    if not system_prompt:
        rest = sent
    return [*own, *rest]


def _anthropic_system(system_prompt: str, added: Any) -> Any:
    """Anthropic's ``system``: the app's ``system_prompt``, then what the compaction added."""
    if added is None:
        return system_prompt
    blocks = [{"type": "text", "text": added}] if isinstance(added, str) else list(added)
    return [{"type": "text", "text": system_prompt}, *blocks]


def _sources(sent: Sequence[Message], converted: Sequence[Message]) -> tuple[int | None, ...]:
    """Index in ``converted`` of each message of ``sent`` (None: made by the compaction)."""
    by_id = {id(message): index for index, message in enumerate(converted)}
    sources: list[int | None] = []
    cursor = 0
    for message in sent:
        index = by_id.get(id(message))
        if index is None:
            index = next(
                (i for i in range(cursor, len(converted)) if converted[i] == message), None
            )
        if index is not None:
            cursor = index + 1
        sources.append(index)
    return tuple(sources)
