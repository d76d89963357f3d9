"""What prime-rl trains on, on the v1 stack: the training client's token ids and logprobs.

prime-rl trains through v1's training client: it renders every prompt to token ids
with the model's chat template and calls vLLM's `/inference/v1/generate`. Here the
scripted policy serves that endpoint over a small local tokenizer (no model can be
downloaded), and the run goes through the real v1 `vf-eval` with `--client.type train`.
"""

from __future__ import annotations

import json

import pytest

from sandbox_env.cli.eval_v1 import load_run, run_eval_v1
from sandbox_env.policy.chat_tokenizer import build_tokenizer

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return build_tokenizer(tmp_path_factory.mktemp("tokenizer"))


@pytest.fixture(scope="module")
def trace(image, tokenizer):
    code, run = run_eval_v1("reference", env_args={"task_ids": ["smoke_sum"], "image": image}, train_tokenizer=tokenizer)
    assert code == 0, f"vf-eval exited with {code}"
    (episode,) = load_run(run)
    return episode.traces[0]


def test_the_training_client_rollout_scores_one(trace):
    assert trace.ok and trace.reward == 1.0 and trace.num_turns == 3


def test_every_sampled_turn_carries_token_ids_and_logprobs(trace):
    sampled = [n for n in trace.nodes if n.sampled]
    assert len(sampled) == 3
    for node in sampled:
        assert node.token_ids and sum(node.mask) == len(node.logprobs) > 0
        assert all(lp <= 0 for lp in node.logprobs)


def test_each_turn_extends_the_previous_one_so_the_rollout_is_one_training_sample(trace):
    # v1 forks a new branch whenever a turn's prompt does not extend the last prompt and
    # completion; one branch holding every sampled node is the prefix invariant.
    assert len(trace.branches) == 1
    branch = trace.branches[0]
    assert sum(n.sampled for n in branch.nodes) == 3
    assert len(branch.token_ids) == len(branch.sampled_mask) and any(branch.sampled_mask)


def test_the_saved_trace_round_trips_with_its_tokens(trace):
    again = type(trace).model_validate_json(trace.model_dump_json())
    assert again.branches[0].token_ids == trace.branches[0].token_ids
    assert json.loads(trace.model_dump_json())["rewards"]["score"]["score"] == 1.0
