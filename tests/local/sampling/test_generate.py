"""Generation on ct_local's sampling sub-jobs: parameters, stops, log-probabilities, routing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ct_local.model import tinylm


def test_greedy_is_deterministic_and_shaped(sp) -> None:
    sp.start()
    first = sp.generate(["Hello", [72, 105]], max_tokens=5, temperature=0, ignore_eos=True)
    again = sp.generate(["Hello", [72, 105]], max_tokens=5, temperature=0, ignore_eos=True)
    assert first == again
    assert len(first) == 2
    for result in first:
        assert set(result) == {"text", "token_ids", "finish_reason"}
        assert len(result["token_ids"]) == 5
        assert result["finish_reason"] == "length"
        assert result["text"] == tinylm.ByteTokenizer().decode(result["token_ids"])


def test_string_prompts_are_tokenized_by_the_server(sp) -> None:
    sp.start()
    text, ids = sp.generate(["Hi!", list(b"Hi!")], max_tokens=4, temperature=0, ignore_eos=True)
    assert text["token_ids"] == ids["token_ids"]


def test_a_flat_id_list_and_a_tensor_are_one_prompt(sp) -> None:
    sp.start()
    flat = sp.generate([72, 105, 33], max_tokens=3, temperature=0, ignore_eos=True)
    tensor = sp.generate(
        np.array([72, 105, 33], dtype=np.int32), max_tokens=3, temperature=0, ignore_eos=True
    )
    nested = sp.generate(
        [np.array([72, 105, 33], dtype=np.int64)], max_tokens=3, temperature=0, ignore_eos=True
    )
    assert len(flat) == 1
    assert flat == tensor == nested


def test_seeded_sampling_repeats_and_seeds_differ(sp) -> None:
    sp.start()
    params = {"max_tokens": 12, "temperature": 1.5, "seed": 7, "ignore_eos": True}
    one = sp.generate(["abc"], **params)
    two = sp.generate(["abc"], **params)
    other = sp.generate(["abc"], **{**params, "seed": 8})
    assert one == two
    assert one != other


def test_top_k_one_and_tiny_top_p_are_greedy(sp) -> None:
    sp.start()
    greedy = sp.generate(["xyz"], max_tokens=6, temperature=0, ignore_eos=True)
    top_k = sp.generate(["xyz"], max_tokens=6, temperature=1.0, top_k=1, seed=3, ignore_eos=True)
    top_p = sp.generate(["xyz"], max_tokens=6, temperature=1.0, top_p=1e-6, seed=3, ignore_eos=True)
    assert greedy[0]["token_ids"] == top_k[0]["token_ids"] == top_p[0]["token_ids"]


def test_stop_token_ids_and_stop_strings(sp) -> None:
    sp.start()
    greedy = sp.generate(["Hello"], max_tokens=8, temperature=0, ignore_eos=True)[0]
    third = greedy["token_ids"][2]
    stopped = sp.generate(["Hello"], max_tokens=8, temperature=0, ignore_eos=True, stop_token_ids=[third])[0]
    assert stopped["finish_reason"] == "stop"
    cut = greedy["token_ids"].index(third) + 1
    assert stopped["token_ids"] == greedy["token_ids"][:cut]
    # A stop string is cut from the text, as vLLM does.
    needle = greedy["text"][-1]
    by_string = sp.generate(["Hello"], max_tokens=8, temperature=0, ignore_eos=True, stop=[needle, "\x00zz"])[
        0
    ]
    assert by_string["finish_reason"] == "stop"
    assert needle not in by_string["text"]
    assert by_string["token_ids"] == greedy["token_ids"][: len(by_string["token_ids"])]
    never = sp.generate(["Hello"], max_tokens=8, temperature=0, ignore_eos=True, stop="\x00never")[0]
    assert never == greedy


def test_logprobs_and_prompt_logprobs(sp) -> None:
    sp.start()
    prompt = [72, 101, 108, 108, 111]
    result = sp.generate(
        [prompt], max_tokens=3, temperature=0, ignore_eos=True, logprobs=2, prompt_logprobs=0
    )[0]
    assert len(result["logprobs"]) == len(result["token_ids"]) == 3
    for token, entry in zip(result["token_ids"], result["logprobs"], strict=True):
        assert str(token) in entry
        assert 2 <= len(entry) <= 3
        # Greedy: the chosen token is the most likely one.
        assert entry[str(token)]["rank"] == 1
        assert entry[str(token)]["logprob"] <= 0
    prompt_lp = result["prompt_logprobs"]
    assert len(prompt_lp) == len(prompt)
    assert prompt_lp[0] is None
    for token, entry in zip(prompt[1:], prompt_lp[1:], strict=True):
        assert list(entry) == [str(token)]  # k=0: only the token at that position
        assert math.isfinite(entry[str(token)]["logprob"])


def test_prompt_logprobs_score_what_generation_produced(sp) -> None:
    """Scoring prompt + output with prompt_logprobs gives the log-probabilities seen while sampling."""
    sp.start()
    prompt = [72, 101, 108, 108, 111]
    sampled = sp.generate([prompt], max_tokens=4, temperature=0, ignore_eos=True, logprobs=0)[0]
    # logprobs: 0 holds only the chosen token at each position.
    assert [list(entry) for entry in sampled["logprobs"]] == [[str(t)] for t in sampled["token_ids"]]
    sequence = prompt + sampled["token_ids"]
    scored = sp.generate([sequence], max_tokens=1, prompt_logprobs=2)[0]["prompt_logprobs"]
    assert len(scored) == len(sequence) and scored[0] is None
    for offset, token in enumerate(sampled["token_ids"]):
        entry = scored[len(prompt) + offset]
        # k = 2: the token at that position plus the two most likely ones (greedy: it is the first).
        assert str(token) in entry and len(entry) == 2 and entry[str(token)]["rank"] == 1
        expected = sampled["logprobs"][offset][str(token)]["logprob"]
        assert math.isclose(entry[str(token)]["logprob"], expected, abs_tol=1e-4)


def test_per_prompt_sampling_params_and_routing_keys(sp) -> None:
    sp.start()
    results = sp.result(
        sp.submit(
            {
                "prompts": ["a", "b"],
                "sampling_params": [{"max_tokens": 2, "temperature": 0, "ignore_eos": True}, None],
                "routing_key": ["conv-1", None],
                "strict": False,
            }
        )
    )["results"]
    assert len(results[0]["token_ids"]) == 2
    assert len(results[1]["token_ids"]) <= 16  # vLLM's default max_tokens


@pytest.mark.parametrize(
    ("logical", "fragment"),
    [
        ({"prompts": []}, "non-empty"),
        ({"prompts": [1.5]}, "string or a list"),
        ({"prompts": ["a"], "sampling_params": {"temperature": -1}}, "temperature"),
        ({"prompts": ["a"], "sampling_params": {"top_p": 0}}, "top_p"),
        ({"prompts": ["a"], "sampling_params": {"max_tokens": 0}}, "max_tokens"),
        ({"prompts": ["a"], "sampling_params": {"best_of": 2}}, "unsupported sampling_params: best_of"),
        ({"prompts": ["a"], "sampling_params": [{}, {}]}, "2 entries for 1 prompts"),
        ({"prompts": ["a"], "routing_key": 3}, "routing_key"),
        ({"prompts": ["a"], "strict": True}, "strict routing needs a routing_key"),
        ({"prompts": [[999]]}, "token ids must lie in"),
        ({"prompts": [list(range(64))]}, "max_seq_len is 64"),
        ({"prompts": ["x" * 64]}, "max_seq_len is 64"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(sp, logical, fragment) -> None:
    sp.start()
    response = sp.post("generate", logical)
    assert response.status_code == 422, response.text
    assert fragment in response.text


def test_length_at_max_seq_len(sp) -> None:
    sp.start()
    result = sp.generate([list(range(60))], max_tokens=50, temperature=0, ignore_eos=True)[0]
    assert result["finish_reason"] == "length"
    assert len(result["token_ids"]) == 4


def test_routing_between_several_sampling_sub_jobs(sp, sampling_sub_job, training_sub_job) -> None:
    sp.start(training_sub_job(), sampling_sub_job(), sampling_sub_job(max_seq_len=32))
    ids = [f"{sp.job_id}:sampling:0", f"{sp.job_id}:sampling:1"]
    refused = sp.post("generate", {"prompts": ["a"]})
    assert refused.status_code == 400
    assert ids[0] in refused.text and ids[1] in refused.text
    # The second sampler's own max_seq_len applies to it.
    assert sp.post("generate", {"prompts": [list(range(40))]}, sub_job_id=ids[1]).status_code == 422
    request_id = sp.submit(
        {"prompts": [list(range(40))], "sampling_params": {"max_tokens": 1}}, sub_job_id=ids[0]
    )
    assert len(sp.result(request_id)["results"]) == 1
    wrong = sp.post("generate", {"prompts": ["a"]}, sub_job_id=f"{sp.job_id}:training:0")
    assert wrong.status_code == 400 and "not a sampling sub-job" in wrong.text
    assert sp.post("generate", {"prompts": ["a"]}, sub_job_id=f"{sp.job_id}:sampling:9").status_code == 404


def test_a_job_without_a_sampler_refuses_generation(sp, training_sub_job) -> None:
    sp.start(training_sub_job())
    response = sp.post("generate", {"prompts": ["a"]})
    assert response.status_code == 400
    assert "no sampling sub-job" in response.text


def test_dssst1_response_options_give_an_envelope(sp) -> None:
    from ct_core import wire

    sp.start()
    response = sp.http.post(
        f"{sp.url}/generate",
        content=wire.dumps(
            {"prompts": ["a"], "sampling_params": {"max_tokens": 2}},
            metadata={"response_options": {"format": "dssst1", "delivery": "chunked"}},
        ),
    )
    status = sp.wait(response.json()["request_id"])
    assert status["result"]["wire_format"] == "DSSST1"
    assert len(sp.result(response.json()["request_id"])["results"]) == 1
