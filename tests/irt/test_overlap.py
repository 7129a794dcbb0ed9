"""The overlap check of full-batch CAIMIRA fits (irt.train.skill_overlap, FitConfig.redraws)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from irt import FitConfig, fit
from irt.train import skill_overlap


def test_skill_overlap_sees_two_dimensions_that_say_the_same_but_not_general_ability():
    gen = torch.Generator().manual_seed(0)
    independent = torch.randn(200, 5, generator=gen)
    assert skill_overlap(independent) < 0.1  # centred, m independent dimensions: about -1/(m-1)
    # an agent strong everywhere is not an overlap: the same general ability added to every dimension
    ability = 3.0 * torch.randn(200, 1, generator=gen)
    assert skill_overlap(independent + ability) == pytest.approx(skill_overlap(independent), abs=1e-6)
    assert np.corrcoef((independent + ability).T.numpy())[0, 1] > 0.8  # which the raw correlation would be
    # two fitted dimensions that are mixtures of the same two
    mixed = independent.clone()
    mixed[:, 3] = 0.6 * independent[:, 0] + 0.4 * independent[:, 1]
    mixed[:, 0] = 0.4 * independent[:, 0] + 0.6 * independent[:, 1]
    assert skill_overlap(mixed) > 0.8
    assert skill_overlap(torch.randn(50, 1, generator=gen)) == 0.0  # one dimension: nothing to overlap


def _many_agents():
    from irt.synthetic import make_synthetic

    return make_synthetic(n_agents=40, n_items=200, embed_dim=16, dims=3, density=0.9, seed=2).data


def test_a_fit_that_ends_with_overlapping_dimensions_gets_a_rival_and_the_better_one_is_kept():
    data = _many_agents()
    cfg = FitConfig(dims=3, lr=0.05, patience=5, max_epochs=400, starts=1, redraws=2)
    seen = []
    # every start overlaps more than -1: the fit runs two rivals to their end, each with its own epochs
    res = fit(data, replace(cfg, overlap_max=-1.0), on_epoch=seen.append)
    st = res.metrics["starts"]
    assert {s.start for s in seen} == {0, 1, 2} and len(st["screened"]) == 2
    assert all(x["dropped"] and x["overlap"] > -1.0 for x in st["screened"])
    losses = {x["start"]: x["best_loss"] for x in st["screened"]}
    losses[st["chosen"]] = res.metrics["val"]["bce"]
    assert sorted(losses) == [0, 1, 2] and st["chosen"] == min(losses, key=losses.get)  # the lowest validation BCE
    assert st["epochs"] == len(seen) == len(res.history) + sum(x["epochs"] for x in st["screened"])
    # each start is the fit that start would have been on its own: the kept one's epochs are its history
    kept = [(s.train_loss, s.val_loss) for s in seen if s.start == st["chosen"]]
    assert kept == [(h["train_bce"], h["val_bce"]) for h in res.history]
    # a fit whose dimensions do not overlap gets no rival: the fit without the check, bit for bit
    passed = fit(data, replace(cfg, overlap_max=1.0))
    plain = fit(data, replace(cfg, redraws=0))
    assert passed.metrics["starts"] == plain.metrics["starts"] == {"chosen": 0, "screened": [], "epochs": len(plain.history)}
    assert passed.history == plain.history
    assert torch.equal(passed.model.skills(), plain.model.skills())
    assert FitConfig().resolved().redraws == 2 and FitConfig(batch_size=512).resolved().redraws == 0


def test_with_several_starts_the_kept_one_is_checked():
    data = _many_agents()
    res = fit(data, FitConfig(dims=3, lr=0.05, patience=5, max_epochs=400, starts=2, redraws=1, overlap_max=-1.0))
    screened = res.metrics["starts"]["screened"]
    # starts 0 and 1 ran to their fixed patience; the better went on, ended overlapping and met rival 2
    starts = res.metrics["starts"]
    assert {x["start"] for x in screened} | {starts["chosen"]} == {0, 1, 2}
    assert [x for x in screened if x.get("dropped")]  # the one of the last two that lost
    total = len(res.history) + sum(x["epochs"] for x in screened if x["start"] != starts["chosen"])
    assert starts["epochs"] == total  # every start's epochs counted once


def test_the_screen_is_off_where_a_correlation_over_agents_means_little():
    from irt.synthetic import make_synthetic

    few = make_synthetic(n_agents=12, n_items=200, embed_dim=16, dims=3, density=0.9, seed=2).data  # < 5 m agents
    cfg = FitConfig(dims=3, lr=0.05, patience=5, max_epochs=60, starts=1, redraws=2, overlap_max=-1.0)
    for data, c in [(few, cfg), (_many_agents(), replace(cfg, batch_size=512)), (_many_agents(), replace(cfg, dims=1)),
                    (_many_agents(), replace(cfg, model="mirt"))]:
        st = fit(data, c).metrics["starts"]
        assert not [x for x in st["screened"] if x.get("dropped")], c
    with pytest.raises(ValueError, match="redraws"):
        fit(few, replace(cfg, redraws=-1))
