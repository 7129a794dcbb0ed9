"""The chat adapter against a fake OpenAI-compatible server on loopback: prompts, parsing, retries, the key."""

from __future__ import annotations

import json
import logging
import time

import pytest

from quizsite.agents.kinds import REGISTRY, question_for
from quizsite.agents.kinds.chat_client import ChatEndpointError
from quizsite.agents.scoring import agent_answer_score

FAST = {"backoff_s": 0.01, "max_backoff_s": 2.0, "timeout_s": 5.0, "model": "fake-model"}


def kind(name: str, server, **settings):  # type: ignore[no-untyped-def]
    return REGISTRY[name]({**FAST, "base_url": server.base_url, **settings})


def user_message(request: dict) -> str:
    return request["body"]["messages"][-1]["content"]


def test_quizbowl_sends_the_prefix_only_at_temperature_zero(demo_items, chat_server):
    item = demo_items["tossup"][0]
    chat_server.reply = lambda body: "Answer: **Moby-Dick**."
    agent = kind("chat-quizbowl", chat_server)
    q0 = question_for(item, clue_index=0)
    out = agent.answer(q0)
    sent = chat_server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["temperature"] == 0 and sent["body"]["model"] == "fake-model"
    prompt = user_message(sent)
    assert q0.text in prompt and "Answer: gold" in prompt  # the one demonstration
    rest = " ".join(item.data["words"][q0.word_index :])
    assert rest not in prompt  # nothing after the clue asked about
    assert out.guess == "Moby-Dick" and out.raw["text"] == "Answer: **Moby-Dick**." and out.tokens == 11
    assert agent.per_clue


def test_ghigliottina_prompts_and_letter_parsing(demo_items, chat_server):
    item = demo_items["ghigliottina"][0]
    q = question_for(item)
    chat_server.reply = lambda body: "Risposta: B) " + q.options[1]
    chosen = kind("chat-ghigliottina-choose", chat_server).answer(q)
    prompt = user_message(chat_server.requests[-1])
    assert prompt.startswith("Date le parole: " + ", ".join(q.clues))
    assert "Quale tra i seguenti concetti è quello che lega le parole date?" in prompt and "\nD. " in prompt
    assert chosen.guess == q.options[1] and chosen.raw["choice_index"] == 1

    chat_server.reply = lambda body: "  «Mano».\nPerché: avere mano libera..."
    open_out = kind("chat-ghigliottina-open", chat_server).answer(q)
    prompt = user_message(chat_server.requests[-1])
    assert ", ".join(q.clues) in prompt
    assert (
        item.answer not in prompt.split("Date le parole: " + q.clues[0])[-1]
    )  # the game's solution is not sent
    assert open_out.guess == "Mano"
    assert agent_answer_score(item, open_out.guess, task="ghigliottina-open").correct == (
        item.answer == "mano"
    )


def test_archaeology_prompts(demo_items, chat_server):
    item = demo_items["archaeology"][0]
    q = question_for(item)
    chat_server.reply = lambda body: "C"
    out = kind("chat-archaeology-choose", chat_server).answer(q)
    assert out.guess == q.options[2] and q.text in user_message(chat_server.requests[-1])
    chat_server.reply = lambda body: "Question: Why does the sky look blue?"
    written = kind("chat-archaeology-write", chat_server).answer(q)
    prompt = user_message(chat_server.requests[-1])
    assert all(o not in prompt for o in q.options)  # the write task never shows the questions
    assert written.guess == "Why does the sky look blue?"


def test_romqa_list_parsing(demo_items, chat_server):
    item = demo_items["romqa"][0]
    q = question_for(item)
    picks = [q.options[3].upper(), q.options[0], "Atlantis"]
    chat_server.reply = lambda body: "Here you go:\n" + json.dumps(picks)
    out = kind("chat-romqa-select", chat_server).answer(q)
    assert out.guess == [q.options[0], q.options[3]] and out.raw["unmatched"] == ["Atlantis"]
    assert all(f"- {c}" in user_message(chat_server.requests[-1]) for c in q.options)
    gold = {c["text"] for c in item.data["candidates"] if c["is_answer"]}
    assert agent_answer_score(item, out.guess).score == pytest.approx(
        2 * len(gold & set(out.guess)) / (len(gold) + 2)
    )


def test_a_template_in_the_settings_replaces_the_shipped_one(demo_items, chat_server):
    q = question_for(demo_items["ghigliottina"][0])
    agent = kind(
        "chat-ghigliottina-open", chat_server, prompt="Indizi: $clues. Parola?", system="Sei un campione."
    )
    agent.answer(q)
    msgs = chat_server.requests[-1]["body"]["messages"]
    assert msgs == [
        {"role": "system", "content": "Sei un campione."},
        {"role": "user", "content": f"Indizi: {', '.join(q.clues)}. Parola?"},
    ]
    with pytest.raises(ValueError, match="unknown or malformed field"):
        kind("chat-ghigliottina-open", chat_server, prompt="$nothing").answer(q)


def test_a_slow_answer_times_out_and_is_retried(demo_items, chat_server):
    chat_server.script = [{"delay": 1.5, "content": "late"}]
    chat_server.reply = lambda body: "mano"
    out = kind("chat-ghigliottina-open", chat_server, timeout_s=0.3).answer(
        question_for(demo_items["ghigliottina"][0])
    )
    assert out.guess == "mano" and out.raw["attempts"] == 2 and len(chat_server.requests) == 2


def test_429_waits_for_retry_after(demo_items, chat_server):
    chat_server.script = [{"status": 429, "headers": {"Retry-After": "1"}}]
    chat_server.reply = lambda body: "mano"
    started = time.monotonic()
    out = kind("chat-ghigliottina-open", chat_server).answer(question_for(demo_items["ghigliottina"][0]))
    assert out.raw["attempts"] == 2 and time.monotonic() - started >= 0.95  # the backoff alone is 0.01 s


def test_500_then_success(demo_items, chat_server):
    chat_server.script = [{"status": 500}, {"status": 502}]
    chat_server.reply = lambda body: "mano"
    out = kind("chat-ghigliottina-open", chat_server).answer(question_for(demo_items["ghigliottina"][0]))
    assert out.guess == "mano" and out.raw["attempts"] == 3


def test_permanent_failure_is_a_clear_error(demo_items, chat_server):
    chat_server.script = [{"status": 503, "body": "overloaded"}] * 10
    agent = kind("chat-ghigliottina-open", chat_server, max_retries=2)
    with pytest.raises(ChatEndpointError, match=r"no answer after 3 attempts \(last: HTTP 503.*overloaded"):
        agent.answer(question_for(demo_items["ghigliottina"][0]))
    assert len(chat_server.requests) == 3


def test_a_refusal_is_not_retried(demo_items, chat_server):
    chat_server.script = [{"status": 404, "body": "no such model"}]
    with pytest.raises(ChatEndpointError, match="refused the request.*404.*no such model"):
        kind("chat-ghigliottina-open", chat_server).answer(question_for(demo_items["ghigliottina"][0]))
    assert len(chat_server.requests) == 1


def test_the_api_key_is_sent_but_never_kept(demo_items, chat_server, monkeypatch, caplog):
    secret = "sk-test-7f3a9c1e5b"
    monkeypatch.setenv("THINKALIKE_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    agent = kind("chat-romqa-select", chat_server, api_key_env="THINKALIKE_TEST_KEY")
    q = question_for(demo_items["romqa"][0])
    chat_server.script = [{"status": 500, "body": "oops"}]
    chat_server.reply = lambda body: json.dumps(list(q.options[:2]))
    outs = agent.answer_many([q, q])
    assert chat_server.requests[0]["headers"]["Authorization"] == f"Bearer {secret}"
    chat_server.script = [{"status": 401, "echo_auth": True, "body": "bad key"}]
    with pytest.raises(ChatEndpointError) as refused:
        agent.answer(q)
    records = [json.dumps([o.guess, o.raw, o.latency_ms, o.tokens]) for o in outs]
    for text in [*records, json.dumps(agent.settings), caplog.text, str(refused.value)]:
        assert secret not in text
    assert "[key]" in str(refused.value) and "retry 1 of" in caplog.text  # the retry was logged, keyless


def test_a_missing_key_or_a_key_in_the_settings_is_refused(demo_items, chat_server, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ChatEndpointError, match="NO_SUCH_KEY_VAR .* is not set"):
        kind("chat-quizbowl", chat_server, api_key_env="NO_SUCH_KEY_VAR").answer(
            question_for(demo_items["tossup"][0])
        )
    with pytest.raises(ValueError, match="api_key_env"):
        kind("chat-quizbowl", chat_server, api_key="sk-x")


@pytest.mark.django_db
def test_registering_a_key_in_the_settings_is_refused_saying_so_and_nothing_is_stored():
    """`--json '{"api_key": "sk-..."}'` was refused only as an unknown setting, and a key pasted as the value
    of api_key_env was stored and echoed back."""
    from quizsite.agents.models import AgentConfig
    from quizsite.agents.services import agentversion_register

    for settings, says in [({"api_key": "sk-abc123"}, "do not store the API key"),
                           ({"api_key_env": "sk-abcdefabcdef0123456789"}, "NAME of an environment variable")]:
        with pytest.raises(ValueError, match=says):
            agentversion_register(name="keyed", kind="chat-quizbowl", settings=settings)
    assert not AgentConfig.objects.filter(name="keyed").exists()
    version, _ = agentversion_register(name="keyed", kind="chat-quizbowl", settings={"api_key_env": "OPENAI_API_KEY"})
    assert version.settings["api_key_env"] == "OPENAI_API_KEY"


def test_rate_limit_spaces_requests_and_concurrency_keeps_order(demo_items, chat_server):
    items = demo_items["ghigliottina"][:5]
    chat_server.reply = lambda body: (
        body["messages"][-1]["content"].split("Date le parole: ")[-1].split(",")[0]
    )
    agent = kind("chat-ghigliottina-open", chat_server, rate_limit_rps=10, concurrency=3)
    started = time.monotonic()
    outs = agent.answer_many([question_for(i) for i in items])
    assert time.monotonic() - started >= 0.39  # five starts, 0.1 s apart
    assert [o.guess for o in outs] == [i.data["clues"][0] for i in items]
