"""The plugin class manifest.yaml points at (execution.python)."""
from __future__ import annotations

from langbot_plugin.api.definition.plugin import BasePlugin


class {{class_name}}Plugin(BasePlugin):
    async def initialize(self) -> None:
        # Runs once when the plugin starts, before any run.
        return None
