"""Run one bot in a room from the shell (the same client the server starts, play/botclient.py)."""

import json

from django.core.management.base import BaseCommand, CommandError

from quizsite.play import bots
from quizsite.play.bot_catalog import bot_agent_register


class Command(BaseCommand):
    help = "Sit an AI agent in a play room as a player until Ctrl-C, the room empties, or it is removed."

    def add_arguments(self, parser):
        parser.add_argument("room", help="the room's slug (as in /play/ROOM/)")
        parser.add_argument("--agent", required=True, help="the bot's name (an AI agent registered as a bot)")
        parser.add_argument(
            "--url", default="", help="the server's websocket base (default PLAY_BOT_WS_BASE)"
        )
        parser.add_argument(
            "--kind", default="", help="register (or update) the agent as a bot of this agent kind first"
        )
        parser.add_argument("--kind-settings", default="{}", help="the kind's settings as JSON (with --kind)")
        parser.add_argument(
            "--threshold", type=float, default=0.5, help="buzz when confidence reaches this (with --kind)"
        )

    def handle(
        self, *args, room: str, agent: str, url: str, kind: str, kind_settings: str, threshold: float, **opts
    ):
        if kind:
            try:
                bot_agent_register(
                    name=agent, kind=kind, kind_settings=json.loads(kind_settings), threshold=threshold
                )
            except (ValueError, TypeError) as exc:
                raise CommandError(str(exc)) from exc
        try:
            # Not listed in the room's `bots`: the operator started it, so removal there does not apply.
            reason = bots.bot_run(room=room, name=agent, base=url or None, listed=False)
        except LookupError as exc:
            raise CommandError(f"{exc.args[0]}; register it with --kind KIND") from exc
        except KeyboardInterrupt:
            reason = "stopped"
        self.stdout.write(f"bot {agent} left room {room}: {reason}")
