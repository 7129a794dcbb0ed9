"""Room transitions with an explicit server clock: scoring, buzz rules, responses rows, leases."""

from datetime import UTC, datetime, timedelta

import pytest

from quizsite.agents.models import Agent
from quizsite.items.models import Response
from quizsite.play import leases, services
from quizsite.play.models import Player, Room
from quizsite.play.services import PlayError
from quizsite.play.work import LostLease

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FAST = {"ms_per_word": 100, "answer_ms": 5000, "dead_ms": 1000, "set": "t"}
LEASE = timedelta(hours=1)


def at(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def types(events):
    return [e["type"] for e in events]


def tick(room, ms):
    """One step of the leader's clock (play/actor.py): reveal what is due, expire what passed."""
    now = at(ms)
    events = services.room_reveal(room=room, now=now)
    if services.room_expiry_due(room=room, now=now):
        events += services.room_expire(room=room, now=now).events
    return events


@pytest.fixture
def room(tossup_set):
    r = leases.room_take(slug="r", driver="p1", now=T0, lease=LEASE, initial_settings=FAST)
    a, b = (services.room_join(room=r, agent_id=Agent.objects.create(kind="human", name=n).pk, name=n, now=T0).pk
            for n in ("ann", "bob"))
    events = services.room_next(room=r, player_id=a, now=at(0)).events
    assert types(events) == ["tossup"]  # reading starts when the leader has told it
    assert types(services.room_start_reading(room=r, now=at(0))) == ["words"]
    return {"a": a, "b": b, "qid": events[0]["qid"], "n": events[0]["n_words"], "item": tossup_set, "room": r}


def buzz_at(room, who, ms):
    return services.room_buzz(room=room["room"], player_id=room[who], qid=room["qid"], now=at(ms))


def answer_at(room, who, text, ms, told_ms=None):
    """An answer arriving at `ms`, its ruling told at `told_ms` (the leader resumes reading then)."""
    outcome = services.room_answer(room=room["room"], player_id=room[who], qid=room["qid"], text=text, now=at(ms))
    services.room_start_reading(room=room["room"], now=at(ms if told_ms is None else told_ms))
    return outcome


def test_words_revealed_follow_server_time_and_pause_on_buzz(room):
    outcome = buzz_at(room, "a", 450)  # words at 0,100,200,300,400 -> 5 revealed
    assert types(outcome.events) == ["words", "buzz"]
    words = outcome.events[0]
    assert {k: words[k] for k in ("qid", "start", "words")} == {"qid": room["qid"], "start": 1, "words": ["W01", "W02", "W03", "W04"]}
    assert words["t"] == int(at(100).timestamp() * 1000)  # when word 1 was due by the room's clock
    assert outcome.events[1]["word_index"] == 5
    assert tick(room["room"], 3000) == []  # paused while someone holds the buzzer


def test_power_correct_scores_15_and_records_response(room):
    buzz_at(room, "a", 450)
    events = answer_at(room, "a", "zanzibar", 1000).events
    assert types(events) == ["ruling", "scores", "tossup_end"]
    assert events[0]["verdict"] == "accept" and events[0]["points"] == 15
    assert events[2]["reason"] == "answered" and "Zanzibar" in events[2]["answer"]
    row = Response.objects.get()
    assert (row.given, row.verdict, row.correct, row.points, row.word_index, row.clue_index, row.elapsed_ms, row.room) == (
        "zanzibar", "accept", True, 15, 5, 0, 1000, "r",
    )
    assert row.n_words == room["n"] and row.source == "live" and row.judge_version


def test_correct_after_power_mark_scores_10(room):
    # power mark after 16 words; with sentence pauses word 17 is shown well after 1,700 ms
    buzz_at(room, "a", 2600)
    assert Room.objects.get(slug="r").buzz_word_index > 16  # saved before the buzz event is told
    assert answer_at(room, "a", "Zanzibar", 2700).events[0]["points"] == 10


def test_wrong_answer_negs_while_words_remain_then_reading_resumes(room):
    buzz_at(room, "a", 450)
    events = answer_at(room, "a", "madagascar", 600).events
    assert types(events) == ["ruling", "scores"] and events[0]["points"] == -5
    # reading resumes from word 5: word 5 one interval after the ruling
    assert tick(room["room"], 650) == []
    words = tick(room["room"], 700)
    assert [(e["start"], e["words"], e["t"]) for e in words] == [(5, ["W05"], int(at(700).timestamp() * 1000))]
    assert Room.objects.get(slug="r").reveal_anchor is None  # the anchor is the telling's, saved by the lease
    # the same player cannot buzz again; the other can
    assert buzz_at(room, "a", 800).reply[0]["code"] == "locked_out"
    assert types(buzz_at(room, "b", 800).events)[-1] == "buzz"


def test_wrong_answer_after_last_word_scores_zero(room):
    events = tick(room["room"], 3200)
    assert sum(len(e["words"]) for e in events if e["type"] == "words") == room["n"] - 1
    buzz_at(room, "a", 3300)
    assert answer_at(room, "a", "madagascar", 3400).events[0]["points"] == 0


def test_prompt_then_accept(room):
    buzz_at(room, "a", 450)
    events = answer_at(room, "a", "zanzi", 600).events
    assert types(events) == ["ruling"] and events[0]["verdict"] == "prompt"
    events = answer_at(room, "a", "zanzibar", 900).events
    assert events[0]["verdict"] == "accept"
    assert list(Response.objects.values_list("verdict", "correct")) == [("prompt", None), ("accept", True)]


def test_answer_deadline_rules_reject_with_empty_text(room):
    buzz_at(room, "a", 450)
    # deadline at 5,450 ms; the clock waits out the 750 ms grace for answers already in flight
    assert tick(room["room"], 6150) == []
    events = tick(room["room"], 6200)
    assert events[0] == {"type": "ruling", "qid": room["qid"], "player_id": room["a"], "text": "", "verdict": "reject", "points": -5}
    row = Response.objects.get()
    assert row.given == "" and row.meta["timeout"] is True


def test_dead_time_ends_tossup(room):
    n = room["n"]
    last = tick(room["room"], 20_000)
    assert types(last) == ["words", "tossup_end"] and last[-1]["reason"] == "timeout"
    assert n == len(room["item"].data["words"])


def test_buzzer_taken_and_answer_without_buzzer(room):
    buzz_at(room, "a", 450)
    assert buzz_at(room, "b", 451).reply[0]["code"] == "buzzer_taken"
    with pytest.raises(PlayError) as exc:
        answer_at(room, "b", "zanzibar", 500)
    assert exc.value.code == "not_your_buzz"


def test_only_one_process_leads_and_a_deposed_leader_cannot_write(room):
    assert leases.room_take(slug="r", driver="p2", now=at(10), lease=LEASE) is None
    successor = leases.room_take(slug="r", driver="p2", now=T0 + 2 * LEASE, lease=LEASE)  # p1's lease lapsed
    assert successor is not None and successor.qid == room["qid"] and successor.phase == Room.Phase.READING
    with pytest.raises(LostLease):  # p1 still believes it leads: its write is fenced off
        buzz_at(room, "a", 450)
    assert Room.objects.get(slug="r").phase == Room.Phase.READING
    assert not leases.room_renew(room=room["room"], now=at(500), lease=LEASE)
    assert leases.room_renew(room=successor, now=T0 + 2 * LEASE, lease=LEASE)


def test_one_pass_renews_every_room_we_lead_and_names_the_lost_one(room):
    r = room["room"]
    mine = leases.room_take(slug="mine", driver="p1", now=T0, lease=LEASE)
    gone = leases.room_take(slug="gone", driver="p1", now=T0, lease=LEASE)
    Room.objects.filter(slug="gone").update(driver="p2")  # another process took it over
    r.sent_upto, r.reveal_base, r.reveal_anchor = 3, 2, at(700)
    got = leases.rooms_renew(rooms=[r, mine, gone], driver="p1", now=at(1000), lease=LEASE)
    assert got == {"r": True, "mine": True, "gone": False}
    row = Room.objects.get(slug="r")
    assert (row.driver_until, row.sent_upto, row.reveal_base, row.reveal_anchor) == (at(1000) + LEASE, 3, 2, at(700))
    assert Room.objects.get(slug="mine").reveal_anchor is None
    assert Room.objects.get(slug="gone").driver_until == T0 + LEASE  # not ours: untouched
    Player.objects.filter(pk=room["a"]).update(last_seen=at(900))
    assert leases.players_online_in(rooms=[r, mine], since=at(800)) == {"r": {room["a"]}, "mine": set()}


def test_rooms_are_taken_together_each_with_its_own_result(room):
    leases.room_take(slug="elsewhere", driver="p2", now=T0, lease=LEASE)
    got = leases.rooms_take(requests=[("new", FAST), ("elsewhere", None), ("bad", {"ms_per_word": 1}), ("r", None),
                                      ("new", None)], driver="p1", now=at(5), lease=LEASE)
    new, elsewhere, bad, ours, again = got
    assert new.slug == "new" and new.settings["ms_per_word"] == 100 and new.driver == "p1"
    assert elsewhere is None  # led by another process whose lease holds
    assert isinstance(bad, PlayError) and bad.code == "bad_settings" and not Room.objects.filter(slug="bad").exists()
    assert ours.slug == "r" and ours.qid == room["qid"]  # ours already: loaded as it is
    assert again.pk == new.pk
    assert dict(Room.objects.values_list("slug", "driver")) == {"r": "p1", "new": "p1", "elsewhere": "p2"}
    loaded = leases.players_load_many(rooms=[ours, new], online_since=T0)
    assert set(loaded[ours.pk][0]) == {room["a"], room["b"]} and loaded[new.pk] == ({}, set(), {})


def test_names_are_cleaned_and_made_unique_in_a_room(room):
    r = room["room"]
    cy = Agent.objects.create(kind="human", name="x")
    assert services.room_join(room=r, agent_id=cy.pk, name="  Ann  ", now=T0).name == "Ann (2)"
    assert services.room_join(room=r, agent_id=cy.pk, name="Ann", now=T0).name == "Ann (2)"  # the same player
    for bad in ("evil\u202egnp", "zero\u200bwidth", "bell\x07", "", " " * 3, "x" * 41):
        with pytest.raises(PlayError) as exc:
            services.room_join(room=r, agent_id=cy.pk, name=bad, now=T0)
        assert exc.value.code == "bad_name"
    assert Player.objects.filter(room=r).count() == 3


def test_names_that_look_blank_stacked_or_like_another_are_told_apart(room):
    r = room["room"]
    for blank in ("\u3164", "\u2800 \u2800", "a" + "\u0301" * 6):  # a Hangul filler, blank braille, a stack of accents
        with pytest.raises(PlayError) as exc:
            services.room_join(room=r, agent_id=Agent.objects.create(kind="human", name="x").pk, name=blank, now=T0)
        assert exc.value.code == "bad_name"
    assert services.room_join(room=r, agent_id=Agent.objects.create(kind="human", name="x").pk, name="Nguye\u0302\u0303n",
                              now=T0).name == "Nguy\u1ec5n"  # two marks on one letter are Vietnamese, not a stack
    joined = [services.room_join(room=r, agent_id=Agent.objects.create(kind="human", name="x").pk, name=n, now=T0).name
              for n in ("\uff41\uff4e\uff4e", "Ann (2)", "ann (2)")]
    # full-width "ann" shows as the room's Ann; a name that is already numbered is numbered on
    assert joined == ["\uff41\uff4e\uff4e (2)", "Ann (3)", "ann (4)"]


def test_settings_are_validated(room):
    with pytest.raises(PlayError):
        services.room_update_settings(room=room["room"], player_id=room["a"], changes={"ms_per_word": 5})
    with pytest.raises(PlayError):
        services.room_update_settings(room=room["room"], player_id=room["a"], changes={"bogus": 1})


def test_report_flags_latest_ruling_without_touching_it(room):
    from quizsite.items.models import RulingReport

    with pytest.raises(PlayError):
        services.room_report(room=room["room"], player_id=room["a"], qid=room["qid"])
    buzz_at(room, "a", 450)
    answer_at(room, "a", "zanzibarr island", 600)
    before = list(Response.objects.values())
    reply = services.room_report(room=room["room"], player_id=room["a"], qid=room["qid"], comment="typo").reply[0]
    report = RulingReport.objects.get()
    assert reply["response_id"] == report.response_id == before[0]["id"]
    assert list(Response.objects.values()) == before  # the original row is never rewritten


def test_reading_resumes_from_when_the_ruling_is_told_not_when_the_answer_arrived(room):
    buzz_at(room, "a", 450)
    answer_at(room, "a", "madagascar", 600, told_ms=900)  # the ruling waited 300 ms for the database
    assert tick(room["room"], 950) == []  # no burst of the words "due" during the wait
    assert [e["start"] for e in tick(room["room"], 1000)] == [5]
    assert leases.room_renew(room=room["room"], now=at(1000), lease=LEASE)
    assert Room.objects.get(slug="r").reveal_anchor == at(900)


def test_answer_arriving_within_the_grace_is_judged(room):
    buzz_at(room, "a", 450)
    events = answer_at(room, "a", "zanzibar", 5450 + 500).events
    assert events[0]["verdict"] == "accept"


def test_next_while_reading_needs_the_running_qid(room):
    with pytest.raises(PlayError) as exc:
        services.room_next(room=room["room"], player_id=room["b"], now=at(100))
    assert exc.value.code == "busy"
    events = services.room_next(room=room["room"], player_id=room["b"], now=at(200), qid=room["qid"]).events
    kinds = [e["type"] for e in events]
    assert kinds[kinds.index("tossup_end") + 1] == "tossup"
    assert events[kinds.index("tossup_end")]["reason"] == "skipped"


@pytest.mark.parametrize("value", [float("inf"), True, "12x", None, [3]])
def test_settings_refuse_values_that_are_not_integers(room, value):
    with pytest.raises(PlayError) as exc:
        services.settings_clean({"ms_per_word": value})
    assert exc.value.code == "bad_settings"
