"""The shipped fit against the floor of its own objective (irt.synthetic.started_at_truth), not only the oracle."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from irt import FitConfig, fit, hash_split
from irt.metrics import binary_metrics
from irt.models import Caimira
from irt.synthetic import (
    floor_config,
    make_synthetic,
    set_true_parameters,
    started_at_truth,
    true_caimira_parameters,
)


@pytest.mark.parametrize("input_scaling", ["rms", "none"])
def test_the_true_parameters_map_onto_the_model_exactly(input_scaling):
    world = make_synthetic(n_agents=12, n_items=40, embed_dim=6, dims=3, density=0.8, seed=7)
    emb = torch.as_tensor(world.data.embeddings)
    model = Caimira(12, 40, 3, 6, embeddings=emb, input_scaling=input_scaling)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    mapped = true_caimira_parameters(world, model)
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())  # read, not changed
    c, ebar = float(model.e_scale), model.e_shift.double()
    assert torch.allclose(mapped["W_D"], torch.as_tensor(world.W_D) * c)
    assert torch.allclose(mapped["b_R"], torch.as_tensor(world.b_R) + torch.as_tensor(world.W_R) @ ebar)
    set_true_parameters(model, world)
    with torch.no_grad():
        bank = model.bank()
        p = torch.sigmoid(model.dense_logits(bank)).numpy()
    assert np.abs(p - world.p_true).max() < 1e-5
    assert np.abs(bank["relevance"].numpy() - world.relevance).max() < 1e-5
    assert np.abs(bank["difficulty"].numpy() - world.difficulty).max() < 1e-4
    hot = Caimira(12, 40, 3, 6, embeddings=emb, temperature=0.5, input_scaling=input_scaling)
    with pytest.raises(ValueError, match="do not map"):
        set_true_parameters(hot, world)  # the world was drawn at temperature 1


def test_started_at_truth_starts_every_fit_at_the_truth_and_restores_the_fit():
    import irt.train

    world = make_synthetic(n_agents=12, n_items=40, embed_dim=6, dims=3, density=0.8, seed=7)
    make = irt.train._make_model
    with started_at_truth(world, freeze=("skill",)):
        res = fit(world.data, floor_config(FitConfig(dims=3, max_epochs=5, threads=1)))
    assert irt.train._make_model is make
    assert res.metrics["epochs"] == 5 and res.metrics["n_val"] == 0  # floor_config: all pairs, every epoch
    assert np.abs(res.skills - world.skills).max() < 1e-6  # frozen at the truth
    far = fit(world.data, FitConfig(dims=3, max_epochs=5, threads=1))  # outside: the random start again
    assert np.abs(far.skills - world.skills).max() > 0.5


def test_the_default_fit_reaches_the_floor_of_its_objective():
    """The near-oracle test (test_train.py) allows 0.012 of accuracy below the oracle, because the oracle is
    out of reach for finite data. The floor is not: the shipped objective (loss, L1, the L2 on the maps, Adam)
    run from the true parameters to convergence on all the fitting pairs (``started_at_truth``,
    ``floor_config``: where a fit from the best possible start ends). The shipped fit must reach it: test
    accuracy at most 0.003 below the floor's, test BCE at most 0.002 above (a fit better than its floor on
    the test pairs, by noise, passes).

    The world is smaller than benchmarks/irt_fit.py's small bank (60 agents x 1,000 items, 32-d, density
    0.45, m = 5, difficulty_scale 3.0: 27,000 responses, 2,721 test pairs; seed 1): shipped 0.8170 / BCE
    0.3918, floor 0.8162 / 0.3916 (the same at 1,000 and 3,000 epochs), oracle 0.8258 / 0.3770. The relation
    is weaker in this world than on the small bank (17 of the 18 seeds in benchmarks/README.md, the 18th
    being seed 22 before the overlap threshold moved to 0.3): over seeds 0-9 the shipped fit was within both
    bounds on 7; seeds 3 and 6 ended in worse local solutions (0.0124 and 0.0179 below the floor, BCE +0.008
    and +0.028) and seed 2 was 0.0044 below in accuracy at nearly the same BCE (+0.0007). Smaller worlds
    held less often (30 x 500: none of seeds 0-2; 40 x 800: 2 of 3). About 6 s on one thread.

    A broken fit fails it: with the full-batch max_epochs at 50 the shipped fit reaches 0.7574; with lr 5e-4
    (both fits) 0.8166 against a floor of 0.8225, which is 0.0092 below the oracle: an oracle - 0.012 bound
    would have let it through.
    """
    world = make_synthetic(n_agents=60, n_items=1000, embed_dim=32, density=0.45, difficulty_scale=3.0, seed=1)
    data = world.data
    test = hash_split(data.split_keys("pair"), 0.1, 1001)
    held = data.responses.subset(test)
    fitting = replace(data, responses=data.responses.subset(~test))
    cfg = FitConfig(seed=1, threads=1)
    shipped = fit(fitting, cfg)
    with started_at_truth(world):
        floor = fit(fitting, floor_config(replace(cfg, max_epochs=1000)))  # converged: 3,000 gives the same

    def score(res):
        p = res.predict_proba([data.item_ids[j] for j in held.item_idx], [data.agent_ids[i] for i in held.agent_idx])
        return binary_metrics(p, held.ruling)

    s, f = score(shipped), score(floor)
    assert s["accuracy"] >= f["accuracy"] - 0.003, (s["accuracy"], f["accuracy"])
    assert s["bce"] <= f["bce"] + 0.002, (s["bce"], f["bce"])
