"""A small agent kind for bot tests, importable by a server process (AGENT_KIND_MODULES=tests.play.botkinds).

It sees only the Question (the words revealed so far): it is sure once its cue word has been read, and
answers with its first guess, offering the others (raw["alternatives"]) for a prompt."""

from quizsite.agents.kinds import REGISTRY, AgentKind, Output, Question, register


class CueKind(AgentKind):
    name = "test-cue"
    item_kinds = frozenset({"tossup"})
    defaults = {"cue": "W05", "guesses": ["Zanzi", "Zanzibar"]}

    def answer(self, question: Question) -> Output:
        seen = question.text.split()
        sure = any(w.strip(".,") == self.settings["cue"] for w in seen)
        guesses = list(self.settings["guesses"])
        return Output(
            guess=guesses[0],
            confidence=1.0 if sure else 0.05,
            raw={"alternatives": guesses[1:], "word_index": question.word_index},
        )


if CueKind.name not in REGISTRY:
    register(CueKind)
