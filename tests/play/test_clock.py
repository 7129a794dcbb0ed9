from quizsite.play import clock


def test_schedule_pauses_longer_after_sentence_ends():
    cum = clock.schedule([False, True, False, False], 100)
    assert cum == [0, 100, 300, 400]


def test_revealed_count_from_start_and_after_resume():
    cum = clock.schedule([False] * 10, 100)
    assert clock.revealed_count(cum, 0, 0) == 1
    assert clock.revealed_count(cum, 0, 99) == 1
    assert clock.revealed_count(cum, 0, 100) == 2
    assert clock.revealed_count(cum, 0, 10_000) == 10
    # resumed at word 4: word 4 comes one interval after the anchor, not at once
    assert clock.revealed_count(cum, 4, 0) == 4
    assert clock.revealed_count(cum, 4, 100) == 5
    assert clock.reveal_offset(cum, 4, 9) == 600
    assert clock.revealed_count(cum, 10, 0) == 10
