"""The facts a turn's prompt shows: the user's current facts relevant to the question, those the chat's
agent may see, raised through the graph when it is on; cached per chat while the user's facts do not change
(`brain.memory.fact_cache`)."""

from __future__ import annotations

import functools

from brain.keys import encode_id
from brain.memory.fact_cache import FactCache, FactView
from brain.memory.facts import Fact
from brain.memory.graph import graph_links
from brain.runtime import Runtime
from brain.search.analysis import searchable
from brain.storage.index import Ranking
from roles.access import agent_of, agent_sees

__all__ = ["PromptFacts"]


class PromptFacts:
    """Facts for prompts over one runtime, with the process's cache of them (shared by every call)."""

    def __init__(self, runtime: Runtime, cache: FactCache | None = None) -> None:
        self.runtime = runtime
        self.settings = runtime.settings.memory
        self.cache = cache or FactCache()

    async def recall(self, user_id: str | bytes, text: str, chat_id: str | bytes | None = None) -> list[Fact]:
        """The user's current facts relevant to `text`, for a turn in `chat_id` (only those the chat's
        agent may see: `roles.access.agent_sees`); none when facts are off. The same question in the same
        chat under the same generation is not searched again (one read of the user's fact generation), nor
        is any question of a user whose fact index was empty under that generation (a user with no facts
        yet costs that one read a turn, not an analysis and a search); a question not cached reads the
        generation with its search (one round trip in all on Redis).

        The generation moves with every change of the user's facts, from any process, so a fact added
        is searched for on the next turn. An index filled without a change of facts (`FactMemory.repair`
        of records an old version left unindexed) is searched once the cache's ttl has passed."""
        facts = self.settings.facts
        if not facts.enabled or self.runtime.tiers is None or not facts.prompt_facts:
            return []
        tiers, graph, limit = self.runtime.tiers, self.settings.graph, facts.prompt_facts
        scope = "" if chat_id is None else encode_id(chat_id, "chat_id")
        views: list[FactView] = []
        cached = self.cache.peek(user_id)
        if cached is not None and (cached.empty or cached.asked(scope, text)):  # still current?
            self._view(user_id, views, await tiers.facts.generation(user_id))
            if views[0].empty:  # the same generation, and no facts under it
                return []
            if (shown := views[0].shown_for(scope, text)) is not None:
                return shown
        known = functools.partial(self._view, user_id, views)  # not a closure: no cells made per turn
        agent = agent_of(chat_id) if chat_id is not None else None
        depth = limit * 2 if agent is not None else limit  # room for facts of other agents, dropped below
        # else the generation is read with the search (`FactMemory.search`), not apart
        rankings: list[Ranking] = []
        found = await tiers.facts.search(
            user_id, text, limit=depth, known=views[0].facts if views else known, rankings=rankings
        )
        view = views[0]
        # an empty index read under the view's generation: nothing is searched while it holds
        view.empty = bool(rankings) and all(r.docs == 0 and r.generation == view.generation for r in rankings)
        if view.empty:
            return []
        if graph.enabled and searchable(text):  # facts linked through the graph to what the best ones name
            links = await graph_links(tiers.graph, user_id, text, [f.id for f in found], graph)
            if links:
                found = await tiers.facts.search(user_id, text, limit=depth, linked=links, known=view.facts)
        shown = [f for f in found if agent_sees(agent, f)][:limit]
        view.show(scope, text, shown, self.cache.questions)
        return shown

    def _view(self, user_id: str | bytes, views: list[FactView], generation: int) -> dict[str, Fact]:
        """The user's cached facts under `generation`, its view appended to `views`."""
        views.append(self.cache.view(user_id, generation))
        return views[-1].facts
