"""The official `openai` package against Helm's OpenAI-compatible endpoint."""

import httpx
import openai
import pytest

from conftest import ANSWER, model_fails_next


def client(base: str, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=token, max_retries=0)


def human_messages(workspace, thread) -> list:
    """What people said in a thread, read over the REST API."""
    body = workspace["api"].get(f"/api/threads/{thread}/messages").json()
    messages = body["items"] if isinstance(body, dict) else body
    return [
        m["content"]
        for m in messages
        if isinstance(m.get("author"), dict) and m["author"].get("kind") == "human"
    ]


def test_models_are_the_channels_the_caller_may_see(base, workspace):
    captain = {m.id for m in client(base, workspace["captain"]).models.list()}
    member = {m.id for m in client(base, workspace["member"]).models.list()}
    assert {"main", "launch", "vault"} <= captain
    assert {"main", "launch"} <= member
    assert "vault" not in member


def test_a_completion_is_the_agents_reply_and_names_its_thread(base, workspace):
    c = client(base, workspace["member"])
    raw = c.chat.completions.with_raw_response.create(
        model="launch", messages=[{"role": "user", "content": "What is the plan?"}]
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == ANSWER
    assert completion.choices[0].message.tool_calls is None
    thread = raw.headers["x-helm-thread"]
    assert thread.isdigit()

    # The header continues the thread…
    again = c.chat.completions.with_raw_response.create(
        model="launch",
        messages=[{"role": "user", "content": "And after GA?"}],
        extra_headers={"X-Helm-Thread": thread},
    )
    assert again.headers["x-helm-thread"] == thread
    # …and so does resending the chat with the agent's reply in it.
    resent = c.chat.completions.with_raw_response.create(
        model="launch",
        messages=[
            {"role": "user", "content": "What is the plan?"},
            {"role": "assistant", "content": ANSWER},
            {"role": "user", "content": "Thanks, who owns it?"},
        ],
    )
    assert resent.headers["x-helm-thread"] == thread
    said = human_messages(workspace, thread)
    assert len(said) == 3, said


def test_streaming_carries_the_reply_in_chunks_without_tool_calls(base, workspace):
    c = client(base, workspace["captain"])
    stream = c.chat.completions.create(
        model="launch",
        messages=[{"role": "user", "content": "Stream the plan, please."}],
        stream=True,
    )
    parts, finish = [], None
    for chunk in stream:
        delta = chunk.choices[0].delta
        assert not delta.tool_calls
        if delta.content:
            parts.append(delta.content)
        finish = chunk.choices[0].finish_reason or finish
    assert "".join(parts) == ANSWER
    assert finish == "stop"


def test_a_stream_that_asks_for_usage_ends_with_it(base, workspace):
    c = client(base, workspace["captain"])
    raw = c.chat.completions.with_raw_response.create(
        model="launch",
        messages=[{"role": "user", "content": "Count the tokens, please."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(raw.parse())
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (10, 5)
    assert all(ch.usage is None for ch in chunks[:-1])
    # The turn keeps its own count.
    thread = workspace["api"].get(f"/api/threads/{raw.headers['x-helm-thread']}").json()
    assert [t["usage"] for t in thread["turns"]] == [{"input_tokens": 10, "output_tokens": 5}]


def test_an_idempotency_key_answers_a_retry_without_posting_twice(base, workspace):
    c = client(base, workspace["captain"])
    key = {"Idempotency-Key": "retry-0001"}
    first = c.chat.completions.with_raw_response.create(
        model="launch", messages=[{"role": "user", "content": "Once only."}], extra_headers=key
    )
    second = c.chat.completions.with_raw_response.create(
        model="launch", messages=[{"role": "user", "content": "Once only."}], extra_headers=key
    )
    assert first.parse().id == second.parse().id
    thread = first.headers["x-helm-thread"]
    assert second.headers["x-helm-thread"] == thread
    assert human_messages(workspace, thread) == [
        "@launch-agent Once only."
    ]


def test_client_tools_are_refused_clearly(base, workspace):
    c = client(base, workspace["captain"])
    with pytest.raises(openai.BadRequestError) as refused:
        c.chat.completions.create(
            model="launch",
            messages=[{"role": "user", "content": "What is the weather?"}],
            tools=[
                {
                    "type": "function",
                    "function": {"name": "weather", "parameters": {"type": "object"}},
                }
            ],
        )
    assert refused.value.code == "tools_not_supported"
    assert "tools" in refused.value.message


def test_a_channel_the_caller_may_not_see_is_no_model(base, workspace):
    c = client(base, workspace["member"])
    with pytest.raises(openai.NotFoundError) as missing:
        c.chat.completions.create(
            model="vault", messages=[{"role": "user", "content": "What is in here?"}]
        )
    assert missing.value.code == "model_not_found"
    with pytest.raises(openai.AuthenticationError):
        client(base, "not-a-token").models.list()


def test_a_failed_turn_is_an_error_not_an_answer(base, workspace):
    c = client(base, workspace["captain"])
    model_fails_next("the model is overloaded")
    with pytest.raises(openai.APIStatusError) as failed:
        c.chat.completions.create(
            model="launch", messages=[{"role": "user", "content": "Plan it."}]
        )
    assert failed.value.status_code == 502
    assert failed.value.code == "turn_failed"
    assert "the model is overloaded" in failed.value.message
    assert failed.value.response.headers["x-helm-thread"].isdigit()

    # Streaming: the error is the stream's last event, and the client raises it.
    model_fails_next("the model is still overloaded")
    stream = c.chat.completions.create(
        model="launch",
        messages=[{"role": "user", "content": "Stream it."}],
        stream=True,
    )
    with pytest.raises(openai.APIError) as streamed:
        for _ in stream:
            pass
    assert "the model is still overloaded" in streamed.value.message


def test_a_failed_turn_is_not_retried_blindly_and_runs_again_when_sent_again(base, workspace):
    # The package's own default: a 5xx is retried twice, with the same body.
    c = openai.OpenAI(base_url=f"{base}/v1", api_key=workspace["captain"])
    asked = [{"role": "user", "content": "Plan the retro, once."}]
    model_fails_next("the model is overloaded")
    with pytest.raises(openai.APIStatusError) as failed:
        c.chat.completions.create(model="launch", messages=asked)
    assert failed.value.response.headers["x-should-retry"] == "false"
    thread = failed.value.response.headers["x-helm-thread"]
    assert "send it again" in failed.value.message
    # Not posted again behind the caller's back (a retry would have been answered).
    assert human_messages(workspace, thread) == ["@launch-agent Plan the retro, once."]
    threads = workspace["api"].get("/api/channels/launch/threads").json()
    title = next(t["title"] for t in threads if str(t["id"]) == thread)
    assert [t["title"] for t in threads].count(title) == 1, "one thread, not one per retry"

    # Sent again in that thread: the failed turn runs anew (and may fail anew).
    model_fails_next("the model is still overloaded")
    with pytest.raises(openai.APIStatusError) as again:
        c.chat.completions.create(
            model="launch", messages=asked, extra_headers={"X-Helm-Thread": thread}
        )
    assert "still overloaded" in again.value.message
    raw = c.chat.completions.with_raw_response.create(
        model="launch", messages=asked, extra_headers={"X-Helm-Thread": thread}
    )
    assert raw.parse().choices[0].message.content == ANSWER
    assert raw.headers["x-helm-thread"] == thread
    assert human_messages(workspace, thread) == ["@launch-agent Plan the retro, once."]

    # Streamed the same way.
    model_fails_next("the model is overloaded again")
    streamed = c.chat.completions.with_raw_response.create(
        model="launch", messages=[{"role": "user", "content": "Stream the retro."}], stream=True
    )
    again_thread = streamed.headers["x-helm-thread"]
    with pytest.raises(openai.APIError):
        for _ in streamed.parse():
            pass
    chunks = c.chat.completions.create(
        model="launch",
        messages=[{"role": "user", "content": "Stream the retro."}],
        stream=True,
        extra_headers={"X-Helm-Thread": again_thread},
    )
    assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == ANSWER
    assert human_messages(workspace, again_thread) == ["@launch-agent Stream the retro."]


def test_a_refusal_is_final_and_not_retried(base, workspace):
    api = workspace["api"]
    api.post("/api/channels", json={"name": "shelved", "purpose": "An old project."}).raise_for_status()
    api.post("/api/channels/shelved/archive").raise_for_status()
    c = openai.OpenAI(base_url=f"{base}/v1", api_key=workspace["captain"])
    with pytest.raises(openai.ConflictError) as refused:
        c.chat.completions.create(
            model="shelved", messages=[{"role": "user", "content": "Anything new?"}]
        )
    assert refused.value.response.headers["x-should-retry"] == "false"
    assert "archived" in refused.value.message


def test_a_message_for_skipper_is_for_skipper_alone(base, workspace):
    c = client(base, workspace["captain"])
    raw = c.chat.completions.with_raw_response.create(
        model="launch", messages=[{"role": "user", "content": "@skipper who runs this place?"}]
    )
    assert raw.parse().choices[0].message.content == ANSWER
    thread = raw.headers["x-helm-thread"]
    assert human_messages(workspace, thread) == ["@skipper who runs this place?"]
    body = workspace["api"].get(f"/api/threads/{thread}/messages").json()
    messages = body["items"] if isinstance(body, dict) else body
    agents = {
        m["author"]["handle"]
        for m in messages
        if isinstance(m.get("author"), dict) and m["author"].get("kind") == "agent"
    }
    assert agents == {"skipper"}, agents


def test_a_model_is_retrieved_and_unknown_paths_are_api_errors(base, workspace):
    member = client(base, workspace["member"])
    launch = member.models.retrieve("launch")
    assert launch.id == "launch" and launch.owned_by == "helm"
    with pytest.raises(openai.NotFoundError) as hidden:
        member.models.retrieve("vault")
    assert hidden.value.code == "model_not_found"
    # Paths no route serves answer as the API does, never with the web UI's page.
    for path in ["/v1", "/v1/embeddings", "/v1/models/launch/extra"]:
        answer = httpx.get(base + path, headers={"authorization": f"Bearer {workspace['member']}"})
        assert answer.status_code == 404, (path, answer.text[:80])
        assert answer.json()["error"]["code"] == "unknown_url", path
    assert httpx.get(base + "/mcp/anything").headers["content-type"].startswith("application/json")


def test_what_helm_cannot_honour_is_refused_not_ignored(base, workspace):
    c = client(base, workspace["captain"])
    with pytest.raises(openai.BadRequestError) as many:
        c.chat.completions.create(
            model="launch", n=2, messages=[{"role": "user", "content": "Two answers?"}]
        )
    assert many.value.code == "n_not_supported"
    key = {"Idempotency-Key": "reuse-0001"}
    first = c.chat.completions.create(
        model="launch", messages=[{"role": "user", "content": "First."}], extra_headers=key
    )
    # The mock model reports 10 prompt and 5 completion tokens per call.
    assert first.usage is not None
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (10, 5)
    assert first.usage.total_tokens == 15
    with pytest.raises(openai.UnprocessableEntityError) as reused:
        c.chat.completions.create(
            model="launch", messages=[{"role": "user", "content": "Another."}], extra_headers=key
        )
    assert reused.value.code == "idempotency_key_reused"
