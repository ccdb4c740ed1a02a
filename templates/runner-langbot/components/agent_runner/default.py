"""The AgentRunner component: each yield is one result of the run."""
from __future__ import annotations

from typing import AsyncGenerator

from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext, AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk


class {{class_name}}Runner(AgentRunner):
    async def run(self, ctx: AgentRunContext) -> AsyncGenerator[AgentRunResult, None]:
        text = ctx.input.to_text() or ""
        reply = f"echo: {text}" if text else f"received {ctx.event.event_type}"
        # Streamed deltas carry the text so far, only where the surface can show them.
        if ctx.delivery.supports_streaming:
            yield AgentRunResult.message_delta(ctx.run_id, MessageChunk(role="assistant", content=reply[: len(reply) // 2]))
        yield AgentRunResult.run_completed(ctx.run_id, Message(role="assistant", content=reply), "stop")
